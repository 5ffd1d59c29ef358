import { BATCHES_PAGE_SIZE, useBatchList } from '../api/queries/batches.ts';
import { BatchesTable } from '../components/batches/batches-table.tsx';
import { Button } from '../components/ui/button.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { useCursorPagination } from '../hooks/use-cursor-pagination.ts';

// The list has no filters, so its cursor stack never starts again.
const NO_FILTERS = '';

/** The key's Batch API batches, newest first, a page at a time; refreshed while any shown is still running. */
export function BatchesPage() {
  const pages = useCursorPagination(NO_FILTERS);
  const batches = useBatchList(pages.cursor);
  const next = batches.data?.has_more ? batches.data.last_id : null;

  return (
    <>
      <PageHeader title="Batches" description="Batch API batches (POST /v1/batches), newest first; refreshed every 3 s while one runs." />
      {batches.isPending && <LoadingState label="Loading batches…" />}
      {batches.isError && <ErrorAlert error={batches.error} onRetry={() => void batches.refetch()} />}
      {batches.data && batches.data.data.length === 0 && (
        <EmptyState title="No batches yet">
          Upload a JSONL file of requests (POST /v1/files, purpose batch) and create a batch over it (POST /v1/batches, or inferq batch submit with the CLI); it
          appears here.
        </EmptyState>
      )}
      {batches.data && batches.data.data.length > 0 && (
        <div className={batches.isPlaceholderData ? 'opacity-60 transition-opacity' : ''} aria-busy={batches.isPlaceholderData}>
          <BatchesTable batches={batches.data.data} />
        </div>
      )}
      {batches.data && (pages.hasPrevious || next) && (
        <nav aria-label="Pagination" className="mt-4 flex items-center justify-between gap-3 text-sm text-slate-600">
          <Button onClick={pages.previous} disabled={!pages.hasPrevious}>
            Previous
          </Button>
          <span>
            Page {pages.page} · {BATCHES_PAGE_SIZE} per page
          </span>
          <Button onClick={() => next && pages.next(next)} disabled={!next || batches.isPlaceholderData}>
            Next
          </Button>
        </nav>
      )}
    </>
  );
}
