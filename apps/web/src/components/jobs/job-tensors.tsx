import type { Job } from '@inferq/contracts';
import { downloadTensor } from '../../api/tensor-download.ts';
import { formatBytes } from '../../lib/format.ts';
import { DownloadButton } from '../download-button.tsx';
import { TensorView } from '../tensor-view.tsx';
import { DataTable } from '../ui/data-table.tsx';
import { EmptyState } from '../ui/states.tsx';

type TensorSummary = NonNullable<Job['inputs']>[number];
type IndexedInput = TensorSummary & { index: number };

const tensorPath = (job: Job, kind: 'inputs' | 'outputs', index: number) => `/v1/jobs/${job.id}/${kind}/${index}`;
const fileName = (job: Job, name: string) => `${job.id}-${name}.bin`;

/** Input headers with a download of each tensor's raw little-endian bytes. */
export function JobInputs({ job }: { job: Job }) {
  const inputs: IndexedInput[] = (job.inputs ?? []).map((t, index) => ({ ...t, index }));
  if (inputs.length === 0) return <EmptyState title="No input details">This job's inputs are not available.</EmptyState>;
  return (
    <DataTable
      caption="Inputs"
      rows={inputs}
      rowKey={(t) => t.name}
      columns={[
        { header: 'Name', cell: (t) => <span className="font-mono">{t.name}</span> },
        { header: 'Datatype', cell: (t) => t.datatype },
        { header: 'Shape', cell: (t) => `[${t.shape.join(', ')}]` },
        { header: 'Size', cell: (t) => formatBytes(t.bytes), className: 'text-right tabular-nums' },
        {
          header: 'Bytes',
          cell: (t) => (
            <DownloadButton
              fetchBlob={() => downloadTensor(tensorPath(job, 'inputs', t.index))}
              filename={fileName(job, t.name)}
              label={`Download input ${t.name}`}
            />
          ),
        },
      ]}
    />
  );
}

/** Output tensors: inline ones rendered as values, large ones (stored in S3) as downloads. */
export function JobOutputs({ job }: { job: Job }) {
  const outputs = job.outputs ?? [];
  if (outputs.length === 0) {
    return (
      <EmptyState title="No outputs yet">
        {job.status === 'succeeded' ? 'This job produced no outputs.' : 'Outputs appear here when the job succeeds.'}
      </EmptyState>
    );
  }
  return (
    <div className="space-y-6">
      {outputs.map((output, index) => (
        <div key={output.name} className="space-y-2">
          {output.data !== undefined ? (
            <TensorView name={output.name} datatype={output.datatype} shape={output.shape} bytes={output.bytes} data={output.data} />
          ) : (
            <p className="text-sm">
              <span className="font-mono font-semibold">{output.name}</span>{' '}
              <span className="text-slate-600">
                {output.datatype} · shape [{output.shape.join(', ')}] · {formatBytes(output.bytes)}: too large to show here, download the raw bytes.
              </span>
            </p>
          )}
          <DownloadButton
            fetchBlob={() => downloadTensor(tensorPath(job, 'outputs', index))}
            filename={fileName(job, output.name)}
            label={`Download output ${output.name}`}
          />
        </div>
      ))}
    </div>
  );
}
