import { CLOCK_SLACK_MS, idTimeMs, type IdRange } from './job-id-range.ts';
import { listJobPartitionBounds } from './job-partitions.ts';
import type { Pool } from './pool.ts';

// Where the work of the sweeps lies in jobs' partitions. A sweep looks for
// unfinished jobs (reconciler, aging, deadline expiry, backlog ages), pending
// webhooks, unpurged jobs (retention, input drops, the response cache) or jobs
// finished in a window (stats, usage); with no id bounds each would plan every
// partition a year of retention leaves, every second or so (job-id-range.ts).
// Each such set starts at a floor, the oldest partition holding a member:
//
// - live (an unfinished job, or a finished one whose webhook is pending) and
//   unpurged (any job not yet purged): a job leaves these sets and never comes
//   back (a retry is a new job; a failed attempt goes from running to queued),
//   and new members are the newest jobs, so their floors only move forward.
//   Each is kept per pool and moved on from where it was: one probe of a
//   partial index per call while the floor partition still holds a member.
// - finished since T: the partitions below the live floor are frozen (no job
//   in them will finish again), so each one's latest finished_at is read once;
//   the range starts at the first frozen one that finished at or after T, else
//   at the live floor.
//
// A floor never passes the partition of now less the clock slack, and every
// range ends the clock slack past now (ids carry the API's clock). Everything is
// read again from the first partition every ten minutes, so a row written
// against the rules (by hand, with an old id) is found within that time.

const FLOOR_TTL_MS = 1_000;
const REFRESH_MS = 600_000;

interface Partition {
  name: string;
  fromMs: number;
}

interface Floors {
  partitions: Partition[];
  readAtMs: number;
  floor: Record<FloorKind, { index: number; checkedAtMs: number }>;
  /** Latest finished_at (ms; null: none) of the partitions below the live floor, by name. */
  lastFinishedMs: Map<string, number | null>;
}

type FloorKind = 'live' | 'unpurged';

const UNFINISHED = `status IN ('queued', 'running')`;
/** Each set as partial-index probes (jobs_unfinished_idx, jobs_webhook_due_idx, jobs_purge_candidates_idx). */
const MEMBER: Record<FloorKind, string[]> = {
  live: [UNFINISHED, `webhook_url IS NOT NULL AND finished_at IS NOT NULL AND webhook_state IS NULL`],
  unpurged: [UNFINISHED, `purged_at IS NULL AND finished_at IS NOT NULL`],
};

const byPool = new WeakMap<Pool, Floors>();

async function floorsOf(pool: Pool): Promise<Floors> {
  const known = byPool.get(pool);
  if (known && Date.now() - known.readAtMs < REFRESH_MS) return known;
  const partitions = (await listJobPartitionBounds(pool)).map((p) => ({ name: p.name, fromMs: p.from === null ? 0 : idTimeMs(p.from) }));
  const fresh: Floors = {
    partitions,
    readAtMs: Date.now(),
    floor: { live: { index: 0, checkedAtMs: 0 }, unpurged: { index: 0, checkedAtMs: 0 } },
    lastFinishedMs: new Map(),
  };
  byPool.set(pool, fresh);
  return fresh;
}

/** A partition dropped since the list was read: read it again, and ask once more. */
async function withPartitions<T>(pool: Pool, fn: (f: Floors) => Promise<T>): Promise<T> {
  try {
    return await fn(await floorsOf(pool));
  } catch (err) {
    if ((err as { code?: string }).code !== '42P01') throw err;
    byPool.delete(pool);
    return fn(await floorsOf(pool));
  }
}

async function floorIndex(pool: Pool, f: Floors, kind: FloorKind): Promise<number> {
  const floor = f.floor[kind];
  if (Date.now() - floor.checkedAtMs < FLOOR_TTL_MS) return floor.index;
  // Never past the partition of now less the clock slack: the next job may land there, whatever it holds now.
  const capMs = Date.now() - CLOCK_SLACK_MS;
  let i = floor.index;
  while (i + 1 < f.partitions.length && f.partitions[i + 1]!.fromMs <= capMs) {
    const p = f.partitions[i]!.name;
    const probe = MEMBER[kind].map((where) => `EXISTS (SELECT 1 FROM ${p} WHERE ${where})`).join(' OR ');
    const { rows } = await pool.query<{ hit: boolean }>(`SELECT ${probe} AS hit`);
    if (rows[0]!.hit) break;
    i++;
  }
  f.floor[kind] = { index: i, checkedAtMs: Date.now() };
  return i;
}

const rangeFrom = (f: Floors, index: number, toMs = Infinity): IdRange => ({
  fromMs: f.partitions[index]?.fromMs ?? 0,
  toMs: Math.min(toMs, Date.now() + CLOCK_SLACK_MS),
});

/** The ids that may belong to an unfinished job or a finished one whose webhook is pending. */
export const liveJobIds = (pool: Pool): Promise<IdRange> => withPartitions(pool, async (f) => rangeFrom(f, await floorIndex(pool, f, 'live')));

/** The ids that may belong to a job not yet purged. */
export const unpurgedJobIds = (pool: Pool): Promise<IdRange> => withPartitions(pool, async (f) => rangeFrom(f, await floorIndex(pool, f, 'unpurged')));

/** The ids that may belong to a job finished at or after `sinceMs` (and created before `toMs`, when given). */
export const jobIdsFinishedSince = (pool: Pool, sinceMs: number, toMs?: number): Promise<IdRange> =>
  withPartitions(pool, async (f) => {
    const live = await floorIndex(pool, f, 'live');
    for (let i = 0; i < live; i++) {
      const p = f.partitions[i]!.name;
      if (!f.lastFinishedMs.has(p)) {
        const { rows } = await pool.query<{ t: Date | null }>(`SELECT max(finished_at) AS t FROM ${p} WHERE finished_at IS NOT NULL`);
        f.lastFinishedMs.set(p, rows[0]?.t?.getTime() ?? null);
      }
      const last = f.lastFinishedMs.get(p);
      if (last !== null && last !== undefined && last >= sinceMs) return rangeFrom(f, i, toMs);
    }
    return rangeFrom(f, live, toMs);
  });
