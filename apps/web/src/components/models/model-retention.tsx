import type { ModelRetention } from '@inferq/contracts';
import { formatRetention } from '@inferq/sdk';
import { useSetModelRetention } from '../../api/mutations/models.ts';
import { RetentionEditor } from '../retention/retention-editor.tsx';
import { Badge } from '../ui/badge.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';

/** `7d server default` or `2d override`: how long finished jobs are kept, and where that comes from. */
export const RetentionSummary = ({ retention }: { retention: Pick<ModelRetention, 'effectiveS' | 'source'> }) => (
  <span className="inline-flex items-center gap-2">
    <span className="font-semibold tabular-nums">{formatRetention(retention.effectiveS)}</span>
    {retention.source === 'model' ? <Badge tone="info">override</Badge> : <Badge tone="muted">server default</Badge>}
  </span>
);

const inputsLine = (inputRetentionS: number | null): string =>
  inputRetentionS === null
    ? 'Inputs are kept as long as the job.'
    : `Inputs of succeeded jobs are dropped ${inputRetentionS === 0 ? 'as soon as they finish' : `${formatRetention(inputRetentionS)} after they finish`}, ` +
      'unless submitted with keepInputs; failed jobs keep theirs for a retry.';

/**
 * How long finished jobs of a model (every version) are kept before they are purged to a tombstone: its override or the
 * server's default, with the editor for those who may set it (models:write, as the API checks).
 */
export function ModelRetentionPanel({ name, retention, editable }: { name: string; retention: ModelRetention; editable: boolean }) {
  const save = useSetModelRetention(name);
  return (
    <div className="space-y-2 text-sm">
      <div className="flex flex-wrap items-center gap-2">
        <span className="text-slate-600">Finished jobs are kept</span>
        <RetentionEditor subject={name} current={retention.retentionS} editable={editable} save={save}>
          <RetentionSummary retention={retention} />
        </RetentionEditor>
      </div>
      <p className="text-slate-600">
        {retention.source === 'model' ? (
          <>
            This model&apos;s own retention
            {retention.updatedAt && (
              <>
                , set <RelativeTime iso={retention.updatedAt} />
              </>
            )}
            : it wins over any key&apos;s.
          </>
        ) : (
          <>The server&apos;s JOB_RETENTION_S. A key with a retention of its own keeps its jobs of this model that long instead.</>
        )}{' '}
        {inputsLine(retention.inputRetentionS)}
      </p>
    </div>
  );
}
