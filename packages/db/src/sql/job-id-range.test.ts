import { describe, expect, it } from 'vitest';
import { daysOf, idAt, idRangeSql, idTimeMs } from './job-id-range.ts';

describe('job id ranges', () => {
  const at = Date.UTC(2026, 10, 27, 13, 45, 12, 345);
  const id = `${idAt(at).slice(0, 14)}7abc-8def-0123456789ab`;

  it('reads the time a UUIDv7 carries, and makes the lowest id of a time', () => {
    expect(idTimeMs(id)).toBe(at);
    expect(idTimeMs(idAt(at))).toBe(at);
    expect(idAt(0)).toBe('00000000-0000-0000-0000-000000000000');
    expect(idTimeMs('not-a-uuid')).toBeNaN();
  });

  it('bounds ids by the UTC days they fall in', () => {
    const day = Date.UTC(2026, 10, 27);
    expect(daysOf([id])).toEqual({ fromMs: day, toMs: day + 86_400_000 });
    expect(daysOf([id, idAt(day - 1)])).toEqual({ fromMs: day - 86_400_000, toMs: day + 86_400_000 });
    expect(daysOf([])).toBeNull();
    expect(daysOf([id, 'nope'])).toBeNull();
  });

  it('writes the bounds as literals, and none where nothing is known or past the last UUIDv7 time', () => {
    expect(idRangeSql(daysOf([id]), 'jobs.id')).toBe(
      `jobs.id >= '${idAt(Date.UTC(2026, 10, 27))}'::uuid AND jobs.id < '${idAt(Date.UTC(2026, 10, 28))}'::uuid`,
    );
    expect(idRangeSql(null)).toBe('TRUE');
    expect(idRangeSql(daysOf(['ffffffff-ffff-7fff-bfff-ffffffffffff']))).toBe(`id >= '${idAt(Math.floor(2 ** 48 / 86_400_000) * 86_400_000)}'::uuid`);
  });
});
