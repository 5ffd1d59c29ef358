import { JOB_STATUSES, PRIORITIES, type JobStatus, type ListJobsQuery, type Priority } from '@inferq/contracts';

export const TIME_RANGES = {
  any: { label: 'Any time', ms: null },
  '15m': { label: 'Last 15 minutes', ms: 15 * 60_000 },
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  custom: { label: 'Custom range', ms: null },
} as const;
export type TimeRange = keyof typeof TIME_RANGES;
const isTimeRange = (v: string | null): v is TimeRange => v !== null && Object.hasOwn(TIME_RANGES, v);

export interface JobFilters {
  status?: JobStatus;
  model?: string;
  priority?: Priority;
  range: TimeRange;
  /** `datetime-local` values (local time), used when range is custom. */
  after?: string;
  before?: string;
}

const pick = <T extends string>(allowed: readonly T[], v: string | null): T | undefined => (allowed.includes(v as T) ? (v as T) : undefined);

/** Filters from the page URL; unknown values are dropped rather than sent. */
export function filtersFromSearchParams(params: URLSearchParams): JobFilters {
  const range = params.get('range');
  return {
    status: pick(JOB_STATUSES, params.get('status')),
    model: params.get('model') || undefined,
    priority: pick(PRIORITIES, params.get('priority')),
    range: isTimeRange(range) ? range : 'any',
    after: params.get('after') || undefined,
    before: params.get('before') || undefined,
  };
}

export function filtersToSearchParams(filters: JobFilters): URLSearchParams {
  const params = new URLSearchParams();
  if (filters.status) params.set('status', filters.status);
  if (filters.model) params.set('model', filters.model);
  if (filters.priority) params.set('priority', filters.priority);
  if (filters.range !== 'any') params.set('range', filters.range);
  if (filters.range === 'custom') {
    if (filters.after) params.set('after', filters.after);
    if (filters.before) params.set('before', filters.before);
  }
  return params;
}

const localToIso = (local: string | undefined): string | undefined => {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
};

/** The `GET /v1/jobs` query for filters; relative ranges are measured back from `nowMs`. */
export function toListJobsQuery(filters: JobFilters, nowMs: number): ListJobsQuery {
  const query: ListJobsQuery = {};
  if (filters.status) query.status = filters.status;
  if (filters.model) query.model = filters.model;
  if (filters.priority) query.priority = filters.priority;
  const { ms } = TIME_RANGES[filters.range];
  if (ms !== null) query.createdAfter = new Date(nowMs - ms).toISOString();
  if (filters.range === 'custom') {
    const after = localToIso(filters.after);
    const before = localToIso(filters.before);
    if (after) query.createdAfter = after;
    if (before) query.createdBefore = before;
  }
  return query;
}
