import { useState } from 'react';
import { Link } from 'react-router';
import type { Model, WorkerStatus } from '@inferq/contracts';
import { useModel } from '../../api/queries/models.ts';
import { formatBatching, formatBytes, formatDateTime, formatEmbedding } from '../../lib/format.ts';
import { findModelLoads } from '../../lib/model-workers.ts';
import { Badge } from '../ui/badge.tsx';
import { buttonStyles } from '../ui/button.tsx';
import { Card } from '../ui/card.tsx';
import { Select } from '../ui/form-controls.tsx';
import { ErrorAlert, LoadingState } from '../ui/states.tsx';
import { EmbeddingsBadge } from './model-badges.tsx';
import { RetentionSummary } from './model-retention.tsx';
import { SignatureTable } from './signature-table.tsx';

interface ModelCardProps {
  latest: Model;
  workers: readonly WorkerStatus[] | undefined;
  canSubmit: boolean;
}

/** One model: a version picker (latest first), its signature, batching, size and the workers holding it. */
export function ModelCard({ latest, workers, canSubmit }: ModelCardProps) {
  const [version, setVersion] = useState(latest.version);
  const older = useModel(`${latest.name}:${version}`, version !== latest.version);
  const model = version === latest.version ? latest : older.data;
  const loadedOn = findModelLoads(workers ?? [], latest.name);
  const versions = Array.from({ length: latest.version }, (_, i) => latest.version - i);

  return (
    <Card
      title={
        <span className="inline-flex items-center gap-2">
          <Link to={`/models/${latest.name}`} className="font-mono text-brand underline-offset-2 hover:underline">
            {latest.name}
          </Link>
          {model?.embedding && <EmbeddingsBadge />}
          {model?.retiredAt && <Badge tone="muted">retired</Badge>}
        </span>
      }
      actions={
        <div className="flex items-center gap-2">
          <label className="flex items-center gap-2 text-sm text-slate-600">
            <span>
              <span className="sr-only">{latest.name} </span>Version
            </span>
            <Select className="w-auto" value={version} onChange={(e) => setVersion(Number(e.target.value))}>
              {versions.map((v) => (
                <option key={v} value={v}>
                  v{v}
                  {v === latest.version ? ' (latest)' : ''}
                </option>
              ))}
            </Select>
          </label>
          {canSubmit && (
            <Link to={`/playground?model=${encodeURIComponent(latest.name)}`} className={buttonStyles({ size: 'sm' })}>
              Try it
            </Link>
          )}
        </div>
      }
    >
      {!model && older.isPending && <LoadingState label={`Loading version ${version}…`} />}
      {!model && older.isError && <ErrorAlert error={older.error} />}
      {model && (
        <div className="space-y-4">
          <dl className="grid grid-cols-2 gap-3 text-sm sm:grid-cols-4">
            <div>
              <dt className="text-xs text-slate-500">Size</dt>
              <dd>{formatBytes(model.sizeBytes)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Registered</dt>
              <dd>{formatDateTime(model.createdAt)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">Batching</dt>
              <dd>{formatBatching(model.signature.batchable, model.batching)}</dd>
            </div>
            <div>
              <dt className="text-xs text-slate-500">sha256</dt>
              <dd className="truncate font-mono text-xs" title={model.sha256}>
                {model.sha256.slice(0, 16)}…
              </dd>
            </div>
            {latest.retention && (
              <div>
                <dt className="text-xs text-slate-500">Job retention</dt>
                <dd>
                  <RetentionSummary retention={latest.retention} />
                </dd>
              </div>
            )}
            {model.embedding && (
              <div className="col-span-2 sm:col-span-4">
                <dt className="text-xs text-slate-500">Embeddings</dt>
                <dd>{formatEmbedding(model.embedding)}</dd>
              </div>
            )}
          </dl>
          <SignatureTable inputs={model.signature.inputs} outputs={model.signature.outputs} modelName={model.name} />
        </div>
      )}
      <div className="mt-4 border-t border-slate-100 pt-3 text-sm">
        <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Loaded on</h3>
        {loadedOn.length === 0 ? (
          <p className="mt-1 text-slate-600">{workers ? 'No worker has it loaded yet; a worker loads it with its first job.' : 'Worker status unavailable.'}</p>
        ) : (
          <ul className="mt-1 flex flex-wrap gap-2">
            {loadedOn.map(({ worker, loaded }) => (
              <li key={`${worker.workerId}-${loaded.version}`}>
                <Badge tone="success">
                  {worker.workerId} · {worker.device} · v{loaded.version} on {loaded.provider}
                </Badge>
              </li>
            ))}
          </ul>
        )}
      </div>
    </Card>
  );
}
