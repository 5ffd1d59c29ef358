import { JOB_STATUSES, JobFilterSchema, PRIORITIES, type JobStatus, type Priority } from '@inferq/contracts';
import type { JobFilterQuery } from '@inferq/sdk';

export const TIME_RANGES = {
  any: { label: 'Any time', ms: null },
  '15m': { label: 'Last 15 minutes', ms: 15 * 60_000 },
  '1h': { label: 'Last hour', ms: 3_600_000 },
  '24h': { label: 'Last 24 hours', ms: 86_400_000 },
  '7d': { label: 'Last 7 days', ms: 7 * 86_400_000 },
  custom: { label: 'Custom range', ms: null },
} as const;
export type TimeRange = keyof typeof TIME_RANGES;
export const TIME_RANGE_VALUES = Object.keys(TIME_RANGES) as TimeRange[];
const isTimeRange = (v: string | null): v is TimeRange => v !== null && Object.hasOwn(TIME_RANGES, v);

export interface JobFilters {
  status?: JobStatus;
  model?: string;
  priority?: Priority;
  range: TimeRange;
  /** `datetime-local` values (local time), used when range is custom. */
  after?: string;
  before?: string;
  /** A job id or its first digits. */
  id?: string;
  /** One API key's jobs (admins; the API scopes anyone else to their own). */
  keyId?: string;
  errorCode?: string;
  /** Text anywhere in the error message. */
  errorText?: string;
  /** A Batch API batch's jobs (`batch_…`): where a batch's page links. */
  batch?: string;
}

// The API's own patterns, so a value the URL or a search box holds is dropped here rather than refused there with a 400.
const { id: ID, errorCode: ERROR_CODE, errorText: ERROR_TEXT, batch: BATCH_ID } = JobFilterSchema.properties;
const ID_PREFIX = new RegExp(ID.pattern ?? '');
const CODE = new RegExp(ERROR_CODE.pattern ?? '');
const TEXT = new RegExp(ERROR_TEXT.pattern ?? '');
const BATCH = new RegExp(BATCH_ID.pattern ?? '');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const accept = (value: string, isValid: (v: string) => boolean): string | undefined => {
  const v = value.trim();
  return v !== '' && isValid(v) ? v : undefined;
};

/** Search text as the API takes it, or undefined when it cannot be sent; ids and codes are case-folded the way they print. */
export const SEARCH_FIELDS = {
  id: (v: string) => accept(v.toLowerCase(), (s) => ID_PREFIX.test(s)),
  keyId: (v: string) => accept(v.toLowerCase(), (s) => UUID.test(s)),
  errorCode: (v: string) => accept(v.toUpperCase(), (s) => CODE.test(s)),
  errorText: (v: string) => accept(v, (s) => [...s].length <= (ERROR_TEXT.maxLength ?? 200) && TEXT.test(s)),
  batch: (v: string) => accept(v.toLowerCase(), (s) => BATCH.test(s)),
} as const satisfies Record<string, (v: string) => string | undefined>;
export type SearchField = keyof typeof SEARCH_FIELDS;

const search = (field: SearchField, v: string | null): string | undefined => (v === null ? undefined : SEARCH_FIELDS[field](v));

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
    id: search('id', params.get('id')),
    keyId: search('keyId', params.get('keyId')),
    errorCode: search('errorCode', params.get('errorCode')),
    errorText: search('errorText', params.get('errorText')),
    batch: search('batch', params.get('batch')),
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
  if (filters.id) params.set('id', filters.id);
  if (filters.keyId) params.set('keyId', filters.keyId);
  if (filters.errorCode) params.set('errorCode', filters.errorCode);
  if (filters.errorText) params.set('errorText', filters.errorText);
  if (filters.batch) params.set('batch', filters.batch);
  return params;
}

const localToIso = (local: string | undefined): string | undefined => {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
};

/** The `GET /v1/jobs` query for filters; relative ranges are measured back from `nowMs`. */
export function toListJobsQuery(filters: JobFilters, nowMs: number): JobFilterQuery {
  const query: JobFilterQuery = {};
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
  if (filters.id) query.id = filters.id;
  if (filters.keyId) query.keyId = filters.keyId;
  if (filters.errorCode) query.errorCode = filters.errorCode;
  if (filters.errorText) query.errorText = filters.errorText;
  if (filters.batch) query.batch = filters.batch;
  return query;
}
