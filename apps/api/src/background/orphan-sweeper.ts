import { createPeriodicTask, type Logger } from '@inferq/core';
import { findUnnamedJobObjects, findUnnamedSegments, type JobObject, type Pool } from '@inferq/db';
import { isRedisOutageError, passCursorKey, withLease, type RedisClient } from '@inferq/queue';
import { inputSegmentKey, inputSegmentOfKey, JOB_OBJECTS_PREFIX, jobObjectsDayPrefix, type Storage } from '@inferq/storage';

/** The name of the orphaned-object pass's lease: one API replica sweeps at a time. */
export const ORPHAN_PASS = 'job-orphans';
/** Longer than any pass takes; a replica that dies holding the lease lets the next one sweep after it. */
const LEASE_MS = 10 * 60_000;
/** Objects checked against Postgres (and deleted) per statement: S3's DeleteObjects takes at most 1,000. */
const CHECK_BATCH = 1_000;
/**
 * Past the job retention, the margin before a day's objects are looked at: submits
 * and attempts of that day are long over, and a purge's own deletes have run.
 */
export const ORPHAN_SWEEP_MARGIN_S = 86_400;
/**
 * `jobs/<day>/<jobId>/inputs|outputs/…` and input segments (`jobs/<day>/segments/<name>.bin`, inputSegmentOfKey):
 * anything else under jobs/ is not ours to judge and is left to the bucket's expiry rule.
 */
const JOB_OBJECT_KEY = /^jobs\/\d{4}-\d{2}-\d{2}\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/(?:inputs|outputs)\//;

export interface OrphanSweeperDeps {
  pool: Pool;
  redis: RedisClient;
  /** The queue prefix the lease and the cursor live under. */
  prefix: string;
  storage: Pick<Storage, 'listObjects' | 'deleteObjects'>;
  logger: Logger;
  intervalMs: number;
  /** ORPHAN_SWEEP_MAX_OBJECTS: objects listed (and so at most deleted) per pass; the next pass goes on from there. */
  maxObjectsPerPass: number;
  /** Only days (and objects) older than this are swept: JOB_RETENTION_S plus ORPHAN_SWEEP_MARGIN_S. */
  minAgeS: number;
  onDeleted?(count: number): void;
}

export interface OrphanSweepResult {
  examined: number;
  deleted: number;
  /** Whether the pass reached the end of the days old enough (the next starts from the oldest again). */
  wrapped: boolean;
}

/**
 * Deletes job objects no row names: outputs of an attempt whose result was
 * fenced out, inputs of a submit whose insert failed, objects a purge could
 * not delete, objects of jobs whose partition was dropped, and input segments
 * no row names any more that a drop or a purge left (findUnnamedSegments).
 * Every interval, on one API replica at a time (a lease in Redis), it lists `jobs/` from where
 * the last pass stopped (a cursor in Redis) up to the first day younger than
 * `minAgeS`, at most `maxObjectsPerPass` objects, and deletes those that
 * neither their job (unpurged) nor any unpurged response-cache hit names
 * (findUnnamedJobObjects). A queued or running job keeps all its objects.
 * The bucket's expiry rule stays the backstop.
 */
export function createOrphanSweeper(deps: OrphanSweeperDeps) {
  const cursorKey = passCursorKey(deps.prefix, ORPHAN_PASS);

  /** Deletes keys no row needs: the count deleted. */
  async function deleteUnnamed(keys: string[]): Promise<number> {
    if (keys.length === 0) return 0;
    await deps.storage.deleteObjects(keys);
    deps.onDeleted?.(keys.length);
    return keys.length;
  }
  const checkObjects = async (objects: JobObject[]) => deleteUnnamed(await findUnnamedJobObjects(deps.pool, objects, { keepUnfinished: true }));
  const checkSegments = async (names: string[]) => deleteUnnamed((await findUnnamedSegments(deps.pool, names)).map(inputSegmentKey));

  async function pass(): Promise<OrphanSweepResult> {
    const startedAt = Date.now();
    // Keys sort by day: every key below the prefix of the day `minAgeS` ago is old enough.
    const end = jobObjectsDayPrefix(new Date(startedAt - deps.minAgeS * 1000));
    const startAfter = (await deps.redis.get(cursorKey)) ?? undefined;
    let examined = 0;
    let deleted = 0;
    let wrapped = true;
    let cursor: string | undefined;
    let batch: JobObject[] = [];
    let segments: string[] = [];
    for await (const o of deps.storage.listObjects(JOB_OBJECTS_PREFIX, { startAfter })) {
      if (o.key >= end) break;
      if (examined === deps.maxObjectsPerPass) {
        wrapped = false;
        break;
      }
      examined++;
      cursor = o.key;
      const jobId = JOB_OBJECT_KEY.exec(o.key)?.[1];
      const segment = inputSegmentOfKey(o.key);
      if (jobId !== undefined) batch.push({ key: o.key, jobId });
      else if (segment !== undefined) segments.push(segment);
      if (batch.length === CHECK_BATCH) {
        deleted += await checkObjects(batch);
        batch = [];
      }
      if (segments.length === CHECK_BATCH) {
        deleted += await checkSegments(segments);
        segments = [];
      }
    }
    deleted += (await checkObjects(batch)) + (await checkSegments(segments));
    if (wrapped) await deps.redis.del(cursorKey);
    else await deps.redis.set(cursorKey, cursor!);
    const result = { examined, deleted, wrapped };
    if (deleted > 0) deps.logger.info({ ...result, ms: Date.now() - startedAt, cursor }, 'orphaned job objects deleted');
    else deps.logger.debug({ ...result, ms: Date.now() - startedAt }, 'orphan sweep');
    return result;
  }

  /** One pass; undefined when another replica holds the lease. */
  const sweepOnce = (): Promise<OrphanSweepResult | undefined> => withLease(deps.redis, deps.prefix, ORPHAN_PASS, LEASE_MS, pass);

  return {
    sweepOnce,
    ...createPeriodicTask({ what: 'orphan sweep', intervalMs: deps.intervalMs, logger: deps.logger, run: sweepOnce, expected: isRedisOutageError }),
  };
}
