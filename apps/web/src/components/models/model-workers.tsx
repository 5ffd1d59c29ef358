import type { WorkerStatus } from '@inferq/contracts';
import { formatMs } from '../../lib/format.ts';
import { findModelEvents, findModelLoads } from '../../lib/model-workers.ts';
import { DataTable, type Column } from '../ui/data-table.tsx';
import { RelativeTime } from '../ui/relative-time.tsx';

const MAX_EVENTS_SHOWN = 10;

type Load = ReturnType<typeof findModelLoads>[number];

const LOAD_COLUMNS: ReadonlyArray<Column<Load>> = [
  { header: 'Worker', cell: ({ worker }) => <span className="font-mono">{worker.workerId}</span> },
  { header: 'Device', cell: ({ worker }) => worker.device },
  { header: 'Version', cell: ({ loaded }) => <span className="font-mono">v{loaded.version}</span> },
  { header: 'Provider', cell: ({ loaded }) => loaded.provider },
  { header: 'Loaded', cell: ({ loaded }) => <RelativeTime iso={loaded.loadedAt} /> },
  { header: 'Last batch', cell: ({ loaded }) => (loaded.lastUsedAt ? <RelativeTime iso={loaded.lastUsedAt} /> : '—') },
];

/** Which workers hold model `name` in memory, and its recent loads and unloads. */
export function ModelWorkers({ name, workers }: { name: string; workers: readonly WorkerStatus[] }) {
  const loads = findModelLoads(workers, name);
  const events = findModelEvents(workers, name).slice(0, MAX_EVENTS_SHOWN);
  return (
    <div className="space-y-4">
      {loads.length === 0 ? (
        <p className="text-sm text-slate-600">No worker has it loaded; a worker serving it loads it with its first job.</p>
      ) : (
        <DataTable
          caption={`Workers with ${name} loaded`}
          columns={LOAD_COLUMNS}
          rows={loads}
          rowKey={({ worker, loaded }) => `${worker.workerId}:${loaded.version}`}
        />
      )}
      {events.length > 0 && (
        <div>
          <h3 className="text-xs font-semibold tracking-wide text-slate-500 uppercase">Recent loads and unloads</h3>
          <ul className="mt-1 space-y-1 text-sm text-slate-700">
            {events.map(({ workerId, event }) => (
              <li key={`${workerId}-${event.at}-${event.version}-${event.event}`}>
                <span className="font-mono">{workerId}</span> {event.event} v{event.version}
                {event.reason && ` (${event.reason})`}
                {event.ms !== undefined && ` in ${formatMs(event.ms)}`} · <RelativeTime iso={event.at} />
              </li>
            ))}
          </ul>
        </div>
      )}
    </div>
  );
}
