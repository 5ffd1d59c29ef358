import { useState } from 'react';
import type { BulkJobActionResult, JobFilterQuery } from '@inferq/sdk';
import { useBulkJobAction, type BulkJobAction } from '../../api/mutations/jobs-bulk.ts';
import { useMe } from '../../api/queries/me.ts';
import { hasScope } from '../../auth/permissions.ts';
import { Button } from '../ui/button.tsx';
import { ErrorAlert } from '../ui/states.tsx';

/** The most jobs one click acts on (the API's default limit); more matching says so and asks for another run. */
const BULK_LIMIT = 1000;

const WORDS = {
  cancel: { button: 'Cancel matching', applies: 'queued', verb: 'Cancel', done: 'Canceled', pending: 'Canceling…' },
  retry: { button: 'Retry matching', applies: 'failed, canceled or expired', verb: 'Retry', done: 'Retried', pending: 'Retrying…' },
} as const;

const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;

type Step =
  | { kind: 'idle' }
  | { kind: 'confirm'; action: BulkJobAction; filter: JobFilterQuery; preview: BulkJobActionResult }
  | { kind: 'done'; action: BulkJobAction; result: BulkJobActionResult };

/**
 * "Cancel matching" and "Retry matching" for the jobs page's current filter:
 * a dry run counts the jobs, a confirmation names the count, then the result
 * says how many were touched. `filter` is read at click time (a relative time
 * range is measured then) and the confirmed call sends that same filter.
 * Shown only to keys with jobs:write; disabled while no filter is set, as the
 * API refuses an empty one.
 */
export function BulkJobActions({ filter }: { filter: (nowMs: number) => JobFilterQuery }) {
  const { data: principal } = useMe();
  const bulk = useBulkJobAction();
  const [step, setStep] = useState<Step>({ kind: 'idle' });
  if (!hasScope(principal, 'jobs:write')) return null;
  const isEmpty = Object.keys(filter(Date.now())).length === 0;

  const preview = (action: BulkJobAction) => {
    const current = filter(Date.now());
    bulk.mutate(
      { action, filter: current, limit: BULK_LIMIT, dryRun: true },
      {
        onSuccess: (result) => setStep(result.matched === 0 ? { kind: 'done', action, result } : { kind: 'confirm', action, filter: current, preview: result }),
      },
    );
  };
  const confirm = (action: BulkJobAction, current: JobFilterQuery) =>
    bulk.mutate({ action, filter: current, limit: BULK_LIMIT, dryRun: false }, { onSuccess: (result) => setStep({ kind: 'done', action, result }) });

  return (
    <section aria-label="Bulk actions" className="mb-4 space-y-3">
      <div className="flex flex-wrap items-center gap-2">
        {(['cancel', 'retry'] as const).map((action) => (
          <Button
            key={action}
            size="sm"
            variant={action === 'cancel' ? 'danger' : 'secondary'}
            disabled={isEmpty || bulk.isPending || step.kind === 'confirm'}
            title={isEmpty ? 'Set a filter first' : `${WORDS[action].verb} every ${WORDS[action].applies} job matching these filters`}
            onClick={() => preview(action)}
          >
            {WORDS[action].button}
          </Button>
        ))}
        {isEmpty && <span className="text-xs text-slate-500">Set a filter to cancel or retry the matching jobs.</span>}
      </div>
      {step.kind === 'confirm' && (
        <ConfirmPanel
          action={step.action}
          preview={step.preview}
          pending={bulk.isPending}
          onConfirm={() => confirm(step.action, step.filter)}
          onBack={() => setStep({ kind: 'idle' })}
        />
      )}
      {step.kind === 'done' && <ResultLine action={step.action} result={step.result} onDismiss={() => setStep({ kind: 'idle' })} />}
      {bulk.isError && <ErrorAlert error={bulk.error} />}
    </section>
  );
}

function ConfirmPanel(props: { action: BulkJobAction; preview: BulkJobActionResult; pending: boolean; onConfirm(): void; onBack(): void }) {
  const words = WORDS[props.action];
  const n = Math.min(props.preview.matched, BULK_LIMIT);
  return (
    <div role="alertdialog" aria-labelledby="bulk-confirm-title" className="rounded-lg border border-slate-300 bg-white p-4 text-sm shadow-sm">
      <p id="bulk-confirm-title" className="font-semibold text-slate-800">
        {words.verb} {jobs(n)}?
      </p>
      <p className="mt-1 text-slate-600">
        {props.preview.matched} {words.applies} {props.preview.matched === 1 ? 'job matches' : 'jobs match'} these filters.
        {props.preview.truncated && ` Only the oldest ${BULK_LIMIT} are acted on; run it again for the rest.`}
        {props.action === 'retry' && ' Each is submitted again as a new job.'}
      </p>
      <div className="mt-3 flex gap-2">
        <Button size="sm" variant={props.action === 'cancel' ? 'danger' : 'primary'} disabled={props.pending} onClick={props.onConfirm}>
          {props.pending ? words.pending : `${words.verb} ${jobs(n)}`}
        </Button>
        <Button size="sm" variant="ghost" disabled={props.pending} onClick={props.onBack}>
          Back
        </Button>
      </div>
    </div>
  );
}

function ResultLine({ action, result, onDismiss }: { action: BulkJobAction; result: BulkJobActionResult; onDismiss(): void }) {
  const words = WORDS[action];
  const text = result.dryRun
    ? `No ${words.applies} jobs match these filters.`
    : `${words.done} ${result.touched} of ${jobs(result.matched)} matched.` +
      (result.skipped > 0 ? ` ${result.skipped} skipped.` : '') +
      (result.truncated ? ` More match than ${BULK_LIMIT}: run it again for the rest.` : '');
  return (
    <p role="status" className="flex items-center gap-3 text-sm text-slate-700">
      {text}
      <Button size="sm" variant="ghost" onClick={onDismiss}>
        Dismiss
      </Button>
    </p>
  );
}
