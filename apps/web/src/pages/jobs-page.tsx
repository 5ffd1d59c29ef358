import { Link, useSearchParams } from 'react-router';
import { useMe } from '../api/queries/me.ts';
import { JOBS_PAGE_SIZE, useJobList } from '../api/queries/jobs.ts';
import { hasScope } from '../auth/permissions.ts';
import { BulkJobActions } from '../components/jobs/bulk-job-actions.tsx';
import { JobFiltersForm } from '../components/jobs/job-filters-form.tsx';
import { JobsTable } from '../components/jobs/jobs-table.tsx';
import { Button, buttonStyles } from '../components/ui/button.tsx';
import { PageHeader } from '../components/ui/page-header.tsx';
import { EmptyState, ErrorAlert, LoadingState } from '../components/ui/states.tsx';
import { useCursorPagination } from '../hooks/use-cursor-pagination.ts';
import { filtersFromSearchParams, filtersToSearchParams, toListJobsQuery, type JobFilters } from '../lib/job-filters.ts';

export function JobsPage() {
  const [searchParams, setSearchParams] = useSearchParams();
  const filters = filtersFromSearchParams(searchParams);
  const filterKey = filtersToSearchParams(filters).toString();
  const pages = useCursorPagination(filterKey);
  const jobs = useJobList(filters, pages.cursor);
  const { data: principal } = useMe();
  const applyFilters = (next: JobFilters) => setSearchParams(filtersToSearchParams(next), { replace: true });
  const isFiltered = filterKey !== '';

  return (
    <>
      <PageHeader title="Jobs" description="Newest first; refreshed every 5 s." />
      <JobFiltersForm filters={filters} onChange={applyFilters} isAdmin={principal?.admin === true} />
      <BulkJobActions key={filterKey} filter={(nowMs) => toListJobsQuery(filters, nowMs)} />
      {jobs.isPending && <LoadingState label="Loading jobs…" />}
      {jobs.isError && <ErrorAlert error={jobs.error} onRetry={() => void jobs.refetch()} />}
      {jobs.data && jobs.data.items.length === 0 && jobs.data.nextCursor && (
        <EmptyState title="Nothing here in this stretch of time">
          A page looks through a month of jobs at most, and none of those matched; Next looks further back.
        </EmptyState>
      )}
      {jobs.data && jobs.data.items.length === 0 && !jobs.data.nextCursor && (
        <EmptyState
          title={isFiltered ? 'No jobs match these filters' : 'No jobs yet'}
          action={
            !isFiltered && hasScope(principal, 'jobs:write') ? (
              <Link to="/playground" className={buttonStyles({ variant: 'primary' })}>
                Submit a job
              </Link>
            ) : undefined
          }
        >
          {isFiltered ? 'Try a wider time range or clear the filters.' : 'Jobs submitted with this API key appear here.'}
        </EmptyState>
      )}
      {jobs.data && jobs.data.items.length > 0 && (
        <div className={jobs.isPlaceholderData ? 'opacity-60 transition-opacity' : ''} aria-busy={jobs.isPlaceholderData}>
          <JobsTable jobs={jobs.data.items} />
        </div>
      )}
      {jobs.data && (pages.hasPrevious || jobs.data.nextCursor) && (
        <nav aria-label="Pagination" className="mt-4 flex items-center justify-between gap-3 text-sm text-slate-600">
          <Button onClick={pages.previous} disabled={!pages.hasPrevious}>
            Previous
          </Button>
          <span>
            Page {pages.page} · {JOBS_PAGE_SIZE} per page
          </span>
          <Button onClick={() => jobs.data.nextCursor && pages.next(jobs.data.nextCursor)} disabled={!jobs.data.nextCursor || jobs.isPlaceholderData}>
            Next
          </Button>
        </nav>
      )}
    </>
  );
}
