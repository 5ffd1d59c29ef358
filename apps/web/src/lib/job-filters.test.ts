import { describe, expect, it } from 'vitest';
import { filtersFromSearchParams, filtersToSearchParams, toListJobsQuery } from './job-filters.ts';

describe('job filters', () => {
  it('round-trips through the URL and drops unknown values', () => {
    const filters = filtersFromSearchParams(new URLSearchParams('status=failed&model=mlp&priority=urgent&range=1h'));
    expect(filters).toEqual({ status: 'failed', model: 'mlp', priority: undefined, range: '1h', after: undefined, before: undefined });
    expect(filtersToSearchParams(filters).toString()).toBe('status=failed&model=mlp&range=1h');
    expect(filtersFromSearchParams(new URLSearchParams('range=forever')).range).toBe('any');
  });

  it('measures relative ranges back from now', () => {
    const now = Date.parse('2025-01-01T12:00:00Z');
    expect(toListJobsQuery({ range: '15m', status: 'queued' }, now)).toEqual({ status: 'queued', createdAfter: '2025-01-01T11:45:00.000Z' });
    expect(toListJobsQuery({ range: 'any' }, now)).toEqual({});
  });

  it('sends a custom range as ISO instants of the local times given', () => {
    const query = toListJobsQuery({ range: 'custom', after: '2025-01-01T08:00', before: 'not a date' }, 0);
    expect(query).toEqual({ createdAfter: new Date('2025-01-01T08:00').toISOString() });
  });
});
