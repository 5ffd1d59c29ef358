// Every statement on jobs names, as constants in its text, the range of ids
// it can touch. jobs is partitioned by RANGE (id) into hundreds of daily
// partitions a year in (job-partitions.ts), each with a dozen indexes; a
// statement whose ids the planner cannot see (a parameter of a named
// statement's generic plan, ids out of a join or a subquery) plans and locks
// every partition and every index of every partition: 70 ms of planning a
// list and 5,000 locks a poll at 395 partitions. With the bounds as literals
// the planner prunes before it opens a partition, so a statement costs what
// the partitions of its range cost, whatever the retention.
//
// A job id is a UUIDv7: its first 48 bits are its creation time in ms. The
// range of a day, [its first possible id, the next day's), holds every id of
// that day; a statement about given ids is bounded by the days they fall in.
// The bound holds for any id (a v4 id too: it lies in the range computed from
// its own bits), so it never hides a row; it only tells the planner where.

export const DAY_MS = 86_400_000;
/**
 * How far the time in a job's id (the API's clock when it made the id) may lie
 * from its created_at (the database's clock at the insert), and so how far
 * bounds taken from times are widened.
 */
export const CLOCK_SLACK_MS = 3_600_000;
/** 2^48: one past the largest time a UUIDv7 can carry. */
const TIME_LIMIT_MS = 2 ** 48;

/** The lowest id of the millisecond `ms` (UUIDv7 layout, every other bit 0). */
export function idAt(ms: number): string {
  const h = Math.min(Math.max(0, Math.floor(ms)), TIME_LIMIT_MS - 1)
    .toString(16)
    .padStart(12, '0');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-0000-0000-000000000000`;
}

/** The creation time a job id carries (its first 48 bits), in ms; NaN for text that is no uuid. */
export function idTimeMs(id: string): number {
  return /^[0-9a-f]{8}-[0-9a-f]{4}-/i.test(id) ? parseInt(id.slice(0, 8) + id.slice(9, 13), 16) : Number.NaN;
}

/** A range of job ids by creation time, [fromMs, toMs). */
export interface IdRange {
  fromMs: number;
  toMs: number;
}

/** The UTC days the ids fall in, as one range from the start of the first to the end of the last; null when there is none (or an id is no uuid). */
export function daysOf(ids: Iterable<string>): IdRange | null {
  let lo = Infinity;
  let hi = -Infinity;
  for (const id of ids) {
    const ms = idTimeMs(id);
    if (Number.isNaN(ms)) return null;
    lo = Math.min(lo, ms);
    hi = Math.max(hi, ms);
  }
  if (lo === Infinity) return null;
  return { fromMs: Math.floor(lo / DAY_MS) * DAY_MS, toMs: (Math.floor(hi / DAY_MS) + 1) * DAY_MS };
}

/**
 * The range as SQL conditions on `column` with literal bounds (the planner
 * prunes on literals, not on a generic plan's parameters); TRUE for null (no
 * bound known). A range reaching past the last time a UUIDv7 can carry has no
 * upper bound.
 */
export function idRangeSql(range: IdRange | null, column = 'id'): string {
  if (range === null) return 'TRUE';
  const lower = `${column} >= '${idAt(range.fromMs)}'::uuid`;
  return range.toMs >= TIME_LIMIT_MS ? lower : `${lower} AND ${column} < '${idAt(range.toMs)}'::uuid`;
}
