import { CLOCK_SLACK_MS, idTimeMs, type IdRange } from '../sql/job-id-range.ts';
import { listJobPartitionBounds } from './job-partitions.ts';
import type { Pool } from '../connection/pool.ts';

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
//   in them will finish again), so each one's latest finished_at is read once
//   per process; the range starts at the first frozen one that finished at or
//   after T, else at the live floor.
//
// A floor never passes the partition of now less the clock slack (the next job
// may land there), and every range ends the clock slack past now. A process
// finds its floors by walking up from the first partition (a second a year in,
// once; concurrent callers wait for the same walk), and walks again every six
// hours, so a row written against the rules (by hand, with an old id) is found
// within that time.

const FLOOR_TTL_MS = 1_000;
const PARTITIONS_TTL_MS = 60_000;
const REWALK_MS = 6 * 3_600_000;

type FloorKind = 'live' | 'unpurged';

interface Partition {
  name: string;
  fromMs: number;
}

interface Floor {
  /** The floor partition's lower bound (0: the first partition). */
  fromMs: number;
  checkedAtMs: number;
  walkedAtMs: number;
}

interface PoolFloors {
  partitions: Partition[];
  partitionsReadAtMs: number;
  floors: Partial<Record<FloorKind, Floor>>;
  /** Moves of a floor in progress, which concurrent callers share. */
  moving: Partial<Record<FloorKind, Promise<Floor>>>;
  /** Latest finished_at (ms; null: none) of frozen partitions, by name: it never changes (concurrent callers share a read). */
  lastFinishedMs: Map<string, Promise<number | null>>;
}

const UNFINISHED = `status IN ('queued', 'running')`;
/** Each set as partial-index probes (jobs_unfinished_idx, jobs_webhook_due_idx, jobs_purge_candidates_idx). */
const MEMBER: Record<FloorKind, string[]> = {
  live: [UNFINISHED, `webhook_url IS NOT NULL AND finished_at IS NOT NULL AND webhook_state IS NULL`],
  unpurged: [UNFINISHED, `purged_at IS NULL AND finished_at IS NOT NULL`],
};

const byPool = new WeakMap<Pool, PoolFloors>();

async function stateOf(pool: Pool): Promise<PoolFloors> {
  let state = byPool.get(pool);
  if (!state) {
    state = { partitions: [], partitionsReadAtMs: 0, floors: {}, moving: {}, lastFinishedMs: new Map() };
    byPool.set(pool, state);
  }
  if (Date.now() - state.partitionsReadAtMs >= PARTITIONS_TTL_MS) {
    state.partitions = (await listJobPartitionBounds(pool)).map((p) => ({ name: p.name, fromMs: p.from === null ? 0 : idTimeMs(p.from) }));
    state.partitionsReadAtMs = Date.now();
  }
  return state;
}

/** The index of the partition a floor stands at: the last one starting at or below it. */
const indexAt = (s: PoolFloors, fromMs: number): number => {
  let i = 0;
  while (i + 1 < s.partitions.length && s.partitions[i + 1]!.fromMs <= fromMs) i++;
  return i;
};

async function moveFloor(pool: Pool, s: PoolFloors, kind: FloorKind): Promise<Floor> {
  const known = s.floors[kind];
  const walk = !known || Date.now() - known.walkedAtMs >= REWALK_MS;
  // Never past the partition of now less the clock slack: the next job may land there, whatever it holds now.
  const capMs = Date.now() - CLOCK_SLACK_MS;
  let i = walk ? 0 : indexAt(s, known.fromMs);
  while (i + 1 < s.partitions.length && s.partitions[i + 1]!.fromMs <= capMs) {
    const p = s.partitions[i]!.name;
    const probe = MEMBER[kind].map((where) => `EXISTS (SELECT 1 FROM ${p} WHERE ${where})`).join(' OR ');
    const { rows } = await pool.query<{ hit: boolean }>(`SELECT ${probe} AS hit`);
    if (rows[0]!.hit) break;
    i++;
  }
  return { fromMs: s.partitions[i]?.fromMs ?? 0, checkedAtMs: Date.now(), walkedAtMs: walk ? Date.now() : known.walkedAtMs };
}

async function floorOf(pool: Pool, s: PoolFloors, kind: FloorKind): Promise<Floor> {
  const known = s.floors[kind];
  if (known && Date.now() - known.checkedAtMs < FLOOR_TTL_MS) return known;
  const moving =
    s.moving[kind] ??
    (s.moving[kind] = moveFloor(pool, s, kind)
      .then((floor) => (s.floors[kind] = floor))
      .finally(() => delete s.moving[kind]));
  return moving;
}

/** Runs `fn` on the pool's floors; a partition dropped since the list was read: read it again, and ask once more. */
async function withFloors<T>(pool: Pool, fn: (s: PoolFloors) => Promise<T>): Promise<T> {
  const s = await stateOf(pool);
  try {
    return await fn(s);
  } catch (err) {
    if ((err as { code?: string }).code !== '42P01') throw err;
    s.partitionsReadAtMs = 0;
    return fn(await stateOf(pool));
  }
}

const rangeFrom = (fromMs: number, toMs = Infinity): IdRange => ({ fromMs, toMs: Math.min(toMs, Date.now() + CLOCK_SLACK_MS) });

/** The ids that may belong to an unfinished job or a finished one whose webhook is pending. */
export const liveJobIds = (pool: Pool): Promise<IdRange> => withFloors(pool, async (s) => rangeFrom((await floorOf(pool, s, 'live')).fromMs));

/** The ids that may belong to a job not yet purged. */
export const unpurgedJobIds = (pool: Pool): Promise<IdRange> => withFloors(pool, async (s) => rangeFrom((await floorOf(pool, s, 'unpurged')).fromMs));

/** The ids that may belong to a job finished at or after `sinceMs` (and created before `toMs`, when given). */
export const jobIdsFinishedSince = (pool: Pool, sinceMs: number, toMs?: number): Promise<IdRange> =>
  withFloors(pool, async (s) => {
    const live = (await floorOf(pool, s, 'live')).fromMs;
    for (const p of s.partitions) {
      if (p.fromMs >= live) break;
      let last = s.lastFinishedMs.get(p.name);
      if (!last) {
        last = pool
          .query<{ t: Date | null }>(`SELECT max(finished_at) AS t FROM ${p.name} WHERE finished_at IS NOT NULL`)
          .then(({ rows }) => rows[0]?.t?.getTime() ?? null);
        s.lastFinishedMs.set(p.name, last);
        last.catch(() => s.lastFinishedMs.delete(p.name));
      }
      const ms = await last;
      if (ms !== null && ms >= sinceMs) return rangeFrom(p.fromMs, toMs);
    }
    return rangeFrom(live, toMs);
  });
