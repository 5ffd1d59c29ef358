import { jobFilterConditions, uuidRange, type JobFilter } from './job-filter.ts';
import { CLOCK_SLACK_MS, DAY_MS, idRangeSql, idTimeMs } from '../sql/job-id-range.ts';
import { SUMMARY_COLUMNS, toRecord, type JobRecord } from './jobs.ts';
import { listJobPartitionBounds } from '../retention/job-partitions.ts';
import type { Pool } from '../connection/pool.ts';

// The jobs list, newest first, read in time windows so that a page costs the
// partitions its window covers, not the retention (job-id-range.ts). A page
// walks back from its cursor through the rest of its day, then windows of 1,
// 2, 4, 8 and 16 days, until it has its rows; a filter that matches nothing in
// those 32 days ends the page early, with a cursor where it stopped,
// and the next page walks on.

/** The windows one page walks after the rest of its first day, newest first (32 days at most in all). */
const WINDOW_DAYS = [1, 2, 4, 8, 16] as const;
/** How long the time of the oldest job is kept per pool. */
const FLOOR_TTL_MS = 60_000;

export interface JobListQuery extends JobFilter {
  /** Keyset cursor: rows strictly older than (createdAt, id). */
  before?: { createdAt: Date; id: string };
  limit: number;
}

export interface JobListPage {
  rows: JobRecord[];
  /**
   * Set when the page ended before `limit` rows without reaching the oldest
   * job: it covered the jobs created from this time on, and the list goes on
   * before it.
   */
  coveredFrom: Date | null;
}

/** Newest first, keyset-paginated on (created_at, id), in windows of time (above). */
export async function listJobs(pool: Pool, q: JobListQuery): Promise<JobListPage> {
  let upper = Math.min(Date.now() + CLOCK_SLACK_MS, q.createdBefore?.getTime() ?? Infinity, q.before ? q.before.createdAt.getTime() + 1 : Infinity);
  let floor = Math.max((await oldestJobMs(pool)) ?? upper, q.createdAfter?.getTime() ?? -Infinity);
  if (q.idPrefix !== undefined) {
    const [low, high] = uuidRange(q.idPrefix).map(idTimeMs) as [number, number];
    upper = Math.min(upper, high + 1 + CLOCK_SLACK_MS);
    floor = Math.max(floor, low - CLOCK_SLACK_MS);
  }
  const rows: JobRecord[] = [];
  // The first window ends the page's days at the last edge below it; each edge lies the clock slack past a UTC
  // midnight, so that with its id bounds widened by the slack a window plans its own days' partitions only.
  let lower = Math.floor((upper - CLOCK_SLACK_MS) / DAY_MS) * DAY_MS + CLOCK_SLACK_MS;
  if (lower >= upper) lower -= DAY_MS;
  for (const days of [0, ...WINDOW_DAYS]) {
    lower -= days * DAY_MS;
    if (upper <= floor) return { rows, coveredFrom: null };
    const from = Math.max(floor, lower);
    rows.push(...(await listWindow(pool, q, from, upper, q.limit - rows.length)));
    if (rows.length >= q.limit) return { rows, coveredFrom: null };
    upper = from;
  }
  return { rows, coveredFrom: upper <= floor ? null : new Date(upper) };
}

/** The rows of one window [lowerMs, upperMs) of created_at, its id bounds widened by the clock slack. */
async function listWindow(pool: Pool, q: JobListQuery, lowerMs: number, upperMs: number, limit: number): Promise<JobRecord[]> {
  const params: unknown[] = [];
  const where = jobFilterConditions(q, params);
  params.push(new Date(lowerMs), new Date(upperMs));
  where.push(`created_at >= $${params.length - 1}::timestamptz`, `created_at < $${params.length}::timestamptz`);
  where.push(idRangeSql({ fromMs: lowerMs - CLOCK_SLACK_MS, toMs: upperMs + CLOCK_SLACK_MS }));
  if (q.before) {
    params.push(q.before.createdAt, q.before.id);
    where.push(`(created_at, id) < ($${params.length - 1}::timestamptz, $${params.length}::uuid)`);
  }
  params.push(limit);
  const { rows } = await pool.query(
    `SELECT ${SUMMARY_COLUMNS} FROM jobs WHERE ${where.join(' AND ')} ORDER BY created_at DESC, id DESC LIMIT $${params.length}`,
    params,
  );
  return rows.map(toRecord);
}

const floors = new WeakMap<Pool, { ms: number | null; at: number }>();

/**
 * When the oldest job was created (less the clock slack), null for no job:
 * where a walk back stops. The first partition holding a row answers (its
 * created_at index's first entry); kept a minute per pool, which only costs a
 * walk an empty window after a drop. Partitions of days still to come are
 * not looked at.
 */
async function oldestJobMs(pool: Pool): Promise<number | null> {
  const cached = floors.get(pool);
  if (cached && Date.now() - cached.at < FLOOR_TTL_MS) return cached.ms;
  let ms: number | null = null;
  for (const p of await listJobPartitionBounds(pool)) {
    if (p.from !== null && idTimeMs(p.from) > Date.now() + CLOCK_SLACK_MS) break;
    const { rows } = await pool.query<{ t: Date | null }>(`SELECT min(created_at) AS t FROM ${p.name}`);
    if (rows[0]?.t) {
      ms = rows[0].t.getTime() - CLOCK_SLACK_MS;
      break;
    }
  }
  // No job yet: asked again next time, as the first one may come any moment.
  if (ms !== null) floors.set(pool, { ms, at: Date.now() });
  return ms;
}
