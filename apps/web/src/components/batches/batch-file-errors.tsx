import type { BulkBatch } from '@inferq/sdk';
import { DataTable, type Column } from '../ui/data-table.tsx';

type FileError = NonNullable<BulkBatch['errors']>['data'][number];

const COLUMNS: ReadonlyArray<Column<FileError>> = [
  { header: 'Line', cell: (error) => error.line ?? '—', className: 'text-right tabular-nums' },
  { header: 'Code', cell: (error) => <span className="font-mono text-xs">{error.code}</span> },
  { header: 'Message', cell: (error) => <span className="whitespace-normal">{error.message}</span> },
];

/** Why the input file was refused (status `failed`): one row a bad line, so the file can be fixed and sent again. */
export function BatchFileErrors({ errors }: { errors: readonly FileError[] }) {
  return (
    <section aria-labelledby="batch-file-errors-heading" className="space-y-2">
      <div role="alert" className="rounded-lg border border-tone-danger/30 bg-tone-danger/5 p-4 text-sm">
        <h2 id="batch-file-errors-heading" className="font-semibold text-tone-danger">
          The input file was refused
        </h2>
        <p className="mt-1 text-slate-700">
          {errors.length === 1 ? 'One line' : `${errors.length} lines`} could not be read as requests; no request ran. Fix the file and create a new batch.
        </p>
      </div>
      <DataTable caption="File validation errors" columns={COLUMNS} rows={errors} rowKey={(error) => `${error.line ?? ''}:${error.code}:${error.message}`} />
    </section>
  );
}
