import { describe, expect, it } from 'vitest';
import { filtersFromSearchParams, filtersToSearchParams, SEARCH_FIELDS, toListJobsQuery, type JobFilters } from './job-filters.ts';

const JOB_ID = '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b';
const KEY_ID = '5f0e8c2a-1b3d-4e5f-8a9b-0c1d2e3f4a5b';
const BATCH_ID = 'batch_0190a1b2a4417c3e9b1d5e6f7a8b9c0d';

describe('job filters', () => {
  it('round-trips through the URL and drops unknown values', () => {
    const filters = filtersFromSearchParams(new URLSearchParams('status=failed&model=mlp&priority=urgent&range=1h'));
    expect(filters).toMatchObject({ status: 'failed', model: 'mlp', priority: undefined, range: '1h', after: undefined, before: undefined });
    expect(filtersToSearchParams(filters).toString()).toBe('status=failed&model=mlp&range=1h');
    expect(filtersFromSearchParams(new URLSearchParams('range=forever')).range).toBe('any');
  });

  it('round-trips the searches: job id prefix, key, error code and error text', () => {
    const filters: JobFilters = {
      range: 'any',
      status: 'failed',
      id: '0190a1b2-7c',
      keyId: KEY_ID,
      errorCode: 'MODEL_LOAD_FAILED',
      errorText: 'out of 100% memory',
    };
    const params = filtersToSearchParams(filters);
    expect(Object.fromEntries(params)).toEqual({
      status: 'failed',
      id: '0190a1b2-7c',
      keyId: KEY_ID,
      errorCode: 'MODEL_LOAD_FAILED',
      errorText: 'out of 100% memory',
    });
    expect(filtersFromSearchParams(new URLSearchParams(params.toString()))).toEqual({ ...filters, model: undefined, priority: undefined });
  });

  it('drops searches the API would refuse, and folds case the way ids and codes print', () => {
    const filters = filtersFromSearchParams(new URLSearchParams('id=xyz&keyId=not-a-uuid&errorCode=9BAD&errorText=%20%20'));
    expect(filters).toMatchObject({ id: undefined, keyId: undefined, errorCode: undefined, errorText: undefined });
    expect(SEARCH_FIELDS.id(` ${JOB_ID.toUpperCase()} `)).toBe(JOB_ID);
    expect(SEARCH_FIELDS.id(`${JOB_ID}0`)).toBeUndefined();
    expect(SEARCH_FIELDS.id('0190A1B2')).toBe('0190a1b2');
    expect(SEARCH_FIELDS.errorCode('model_load_failed')).toBe('MODEL_LOAD_FAILED');
    expect(SEARCH_FIELDS.keyId(KEY_ID.toUpperCase())).toBe(KEY_ID);
    expect(SEARCH_FIELDS.errorText(' CUDA out of memory ')).toBe('CUDA out of memory');
    expect(SEARCH_FIELDS.errorText('x'.repeat(201))).toBeUndefined();
    expect(SEARCH_FIELDS.errorText('nul \u0000 byte')).toBeUndefined();
  });

  it('carries a Batch API batch from the URL to the list query, and drops an id that is not one', () => {
    const filters = filtersFromSearchParams(new URLSearchParams(`batch=${BATCH_ID.toUpperCase().replace('BATCH_', 'batch_')}&status=failed`));
    expect(filters).toMatchObject({ batch: BATCH_ID, status: 'failed' });
    expect(filtersToSearchParams(filters).toString()).toBe(`status=failed&batch=${BATCH_ID}`);
    expect(toListJobsQuery(filters, 0)).toEqual({ status: 'failed', batch: BATCH_ID });
    expect(filtersFromSearchParams(new URLSearchParams('batch=batch_123')).batch).toBeUndefined();
    expect(SEARCH_FIELDS.batch(' file-0190a1b29d8e7f6a8b5c4d3e2f1a0b9c ')).toBeUndefined();
  });

  it('measures relative ranges back from now', () => {
    const now = Date.parse('2025-01-01T12:00:00Z');
    expect(toListJobsQuery({ range: '15m', status: 'queued' }, now)).toEqual({ status: 'queued', createdAfter: '2025-01-01T11:45:00.000Z' });
    expect(toListJobsQuery({ range: 'any' }, now)).toEqual({});
  });

  it('passes the searches to the list query', () => {
    const query = toListJobsQuery({ range: 'any', id: '0190a1b2', keyId: KEY_ID, errorCode: 'INFERENCE_FAILED', errorText: 'memory' }, 0);
    expect(query).toEqual({ id: '0190a1b2', keyId: KEY_ID, errorCode: 'INFERENCE_FAILED', errorText: 'memory' });
  });

  it('sends a custom range as ISO instants of the local times given', () => {
    const query = toListJobsQuery({ range: 'custom', after: '2025-01-01T08:00', before: 'not a date' }, 0);
    expect(query).toEqual({ createdAfter: new Date('2025-01-01T08:00').toISOString() });
  });
});
