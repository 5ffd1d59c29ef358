import type { ReactNode } from 'react';
import type { WorkerStatus } from '@inferq/contracts';
import { formatAdaptiveBatching } from '../../lib/format.ts';
import { Badge } from '../ui/badge.tsx';
import { Card } from '../ui/card.tsx';
import { Meter } from '../ui/meter.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';

const Fact = ({ label, children }: { label: string; children: ReactNode }) => (
  <div>
    <dt className="text-xs text-slate-500">{label}</dt>
    <dd className="text-sm text-slate-900">{children}</dd>
  </div>
);

/** One worker process from its last heartbeat. */
export function WorkerCard({ worker }: { worker: WorkerStatus }) {
  const providers = [...new Set(worker.modelsLoaded.map((m) => m.provider))];
  const { gpu, currentBatch } = worker;
  return (
    <Card
      title={<span className="font-mono">{worker.workerId}</span>}
      headingLevel="h2"
      actions={
        <span className="flex gap-2">
          {worker.ready === false && <Badge tone="danger">not ready</Badge>}
          {currentBatch ? <Badge tone="progress">busy</Badge> : <Badge tone="success">idle</Badge>}
        </span>
      }
    >
      {worker.faults && worker.faults.length > 0 && (
        <div role="alert" aria-label="Worker faults" className="mb-4 rounded-lg border border-tone-danger/30 bg-tone-danger/5 p-3 text-sm">
          <p className="font-medium">Not taking these models after a fault of its own; their jobs go to other workers, unspent.</p>
          <ul className="mt-1 space-y-1">
            {worker.faults.map((f) => (
              <li key={f.model}>
                <span className="font-mono">
                  {f.model} v{f.version}
                </span>{' '}
                · {f.code}: {f.message} · since <RelativeTime iso={f.since} />, retries <RelativeTime iso={f.retryAt} />
              </li>
            ))}
          </ul>
        </div>
      )}
      <dl className="grid grid-cols-2 gap-3 sm:grid-cols-3">
        <Fact label="Device">{worker.device}</Fact>
        <Fact label="Execution provider">{providers.length > 0 ? providers.join(', ') : 'none loaded yet'}</Fact>
        <Fact label="Host">
          {worker.hostname} · pid {worker.pid}
        </Fact>
        <Fact label="Current batch">
          {currentBatch ? (
            <>
              {currentBatch.size} jobs of {currentBatch.model}, since <RelativeTime iso={currentBatch.startedAt} />
            </>
          ) : (
            'idle'
          )}
        </Fact>
        <Fact label="Jobs processed">
          {worker.jobsSucceeded.toLocaleString()} succeeded · {worker.jobsFailed.toLocaleString()} failed · {worker.batches.toLocaleString()} batches
        </Fact>
        <Fact label="Last heartbeat">
          <RelativeTime iso={worker.lastHeartbeatAt} />
        </Fact>
        <Fact label="Started">
          <RelativeTime iso={worker.startedAt} />
        </Fact>
      </dl>
      <div className="mt-4 border-t border-slate-100 pt-3">
        <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Models loaded</h3>
        {worker.modelsLoaded.length === 0 ? (
          <p className="mt-1 text-sm text-slate-600">None yet{worker.modelsServed.length > 0 ? `; serves ${worker.modelsServed.join(', ')}` : ''}.</p>
        ) : (
          <ul className="mt-1 flex flex-wrap gap-2">
            {worker.modelsLoaded.map((m) => (
              <li key={`${m.model}:${m.version}`}>
                <Badge>
                  {m.model} v{m.version} · {m.provider}
                </Badge>
              </li>
            ))}
          </ul>
        )}
      </div>
      {worker.adaptiveBatching && worker.adaptiveBatching.length > 0 && (
        <div className="mt-4 border-t border-slate-100 pt-3">
          <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Adaptive batching</h3>
          <ul className="mt-1 space-y-0.5 text-sm text-slate-700">
            {worker.adaptiveBatching.map((a) => (
              <li key={a.model} title={a.reason}>
                {formatAdaptiveBatching(a)}
              </li>
            ))}
          </ul>
        </div>
      )}
      {gpu && (
        <div className="mt-4 space-y-2 border-t border-slate-100 pt-3">
          <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">GPU · {gpu.name}</h3>
          <Meter label="GPU utilisation" value={gpu.utilizationPercent} max={100} text={`${Math.round(gpu.utilizationPercent)}%`} />
          <Meter
            label="GPU memory"
            value={gpu.memoryUsedMiB}
            max={gpu.memoryTotalMiB}
            text={`${Math.round(gpu.memoryUsedMiB).toLocaleString()} / ${Math.round(gpu.memoryTotalMiB).toLocaleString()} MiB`}
          />
        </div>
      )}
    </Card>
  );
}
