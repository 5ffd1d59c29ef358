import { inputSegmentJobIds, type PurgeReason } from '@inferq/contracts';
import { withTransaction, type Pool, type PoolClient } from '../connection/pool.ts';
import { unpurgedJobIds } from './job-floors.ts';
import { DAY_MS, daysOf, idRangeSql, type IdRange } from '../sql/job-id-range.ts';

// Retention: a finished job is purged to a tombstone once its retention has
// run out (or when it is deleted), and its input tensors may be dropped
// sooner. Every change to a job's stored data goes through the two batch
// functions here; the API deletes the S3 objects they return.
//
// An S3 object may be referenced by several rows: a response-cache hit copies
// the inputs and outputs of the succeeded job it reuses (the same keys), and a
// later hit may copy that copy. All of them share (model_name, model_version,
// input_sha256) and are succeeded, so the keys still referenced by another row
// are found by one probe of jobs_response_cache_idx per group; those are never
// returned for deletion. The rows acted on are locked first and the references
// read in a later statement, so a cache hit committed meanwhile is seen, and
// the cache lookup locks its source row FOR SHARE, so it never copies keys
// from a row being purged. Two purges of rows sharing objects at the same
// moment may each see the other unpurged and both keep the objects: a leak
// (the bucket's lifecycle rule catches it), never a deletion a row needs.

/** Finished in this sense: a status that never changes again. */
const FINISHED = `finished_at IS NOT NULL AND status IN ('succeeded', 'failed', 'canceled', 'expired')`;
const SUCCEEDED = `finished_at IS NOT NULL AND status = 'succeeded'`;

/** The keys of every tensor of the rows in `target` (a CTE with inputs and outputs columns). */
const TENSOR_KEYS = (tensors: string) => `jsonb_array_elements(${tensors}) AS e WHERE e ? 'key'`;

/** The first and last job ids of a segment's name (contracts' inputSegmentName: `<32 hex>.<32 hex>`). */
const segmentIdSql = (name: string, n: 1 | 2) => `substr(${name}, ${n === 1 ? 1 : 34}, 32)::uuid`;
/** Whether row `alias` names `value` as a tensor's `field` (an object's `key`, a `segment`): the cache-hit index's form (jobs_cache_hit_keys_idx). */
const namesTensor = (alias: string, field: 'key' | 'segment', value: string) =>
  `(${alias}.inputs || COALESCE(${alias}.outputs, '[]'::jsonb)) @> jsonb_build_array(jsonb_build_object('${field}', ${value}))`;

/**
 * Of the segments in `segments` (a query of `name`s), those no row but $1's needs: no unpurged job of its group names
 * it (a primary-key probe of the group's ids, within `groups`), nor any unpurged response-cache hit (jobs_cache_hit_keys_idx).
 */
const unneededSegments = (segments: string, groups: IdRange | null, unpurged: IdRange | null) => `
  SELECT s.name FROM (${segments}) s
   WHERE NOT EXISTS (SELECT 1 FROM jobs o WHERE ${idRangeSql(groups, 'o.id')} AND o.id BETWEEN ${segmentIdSql('s.name', 1)} AND ${segmentIdSql('s.name', 2)}
                        AND o.id <> ALL($1::uuid[]) AND o.purged_at IS NULL AND ${namesTensor('o', 'segment', 's.name')})
     AND NOT EXISTS (SELECT 1 FROM jobs h WHERE ${idRangeSql(unpurged, 'h.id')} AND h.cached_from IS NOT NULL AND h.purged_at IS NULL
                        AND h.id <> ALL($1::uuid[]) AND ${namesTensor('h', 'segment', 's.name')})`;

/** The segments the rows of `target` name. */
const TARGET_SEGMENTS = `SELECT DISTINCT e->>'segment' AS name FROM target, jsonb_array_elements(target.inputs) AS e WHERE e ? 'segment'`;

/** The days of `ids` and one either side: where the other jobs of their segments' groups are (a group spans seconds). */
function groupDays(ids: string[]): IdRange | null {
  const days = daysOf(ids);
  return days && { fromMs: days.fromMs - DAY_MS, toMs: days.toMs + DAY_MS };
}

/** Keys still referenced by another row (not in $1, not purged; `unpurged` bounds their ids) of the same response-cache groups as `target`. */
const sharedKeys = (unpurged: IdRange) => `
  SELECT e->>'key' AS key
    FROM jobs o
    JOIN (SELECT DISTINCT model_name, model_version, input_sha256 FROM target WHERE input_sha256 IS NOT NULL) g
      ON o.model_name = g.model_name AND o.model_version = g.model_version AND o.input_sha256 = g.input_sha256,
         ${TENSOR_KEYS(`o.inputs || COALESCE(o.outputs, '[]'::jsonb)`)}
     AND o.status = 'succeeded' AND o.input_sha256 IS NOT NULL AND o.purged_at IS NULL AND o.id <> ALL($1::uuid[])
     AND ${idRangeSql(unpurged, 'o.id')}`;

export interface PurgeResult {
  /** The jobs purged by this call (already purged or unfinished ones are left out). */
  ids: string[];
  /** S3 objects no row references any more: the caller deletes them. */
  keys: string[];
  /** Input segments (by name) no row references any more: the caller deletes their objects too. */
  segments: string[];
}

/** Locks the rows that may be acted on, in id order (no deadlock between two callers); SKIP LOCKED leaves rows another caller holds. */
async function lockRows(client: PoolClient, ids: string[], condition: string, skipLocked: boolean): Promise<string[]> {
  const { rows } = await client.query<{ id: string }>(
    `SELECT id FROM jobs WHERE id = ANY($1::uuid[]) AND ${idRangeSql(daysOf(ids))} AND ${condition} ORDER BY id FOR UPDATE ${skipLocked ? 'SKIP LOCKED' : ''}`,
    [ids],
  );
  return rows.map((r) => r.id);
}

/**
 * Purges finished jobs to tombstones: inputs `[]`, outputs, inline tensor bytes, metadata, webhook
 * URL, error message and input hash cleared, `purged_at` and `purge_reason`
 * set; the id, owner, model, priority, status, times, accounting (queue_ms,
 * infer_ms, device_ms, items), batch, worker and error code stay, so usage and
 * stats still count the job, and so does its Idempotency-Key (its
 * job_idempotency row stays: the key still answers with the tombstone's id,
 * 410 on read). Its webhook deliveries are deleted and a pending
 * webhook is never sent. Unfinished and already purged jobs are skipped.
 */
export async function purgeJobs(pool: Pool, ids: string[], reason: PurgeReason, options: { skipLocked?: boolean } = {}): Promise<PurgeResult> {
  if (ids.length === 0) return { ids: [], keys: [], segments: [] };
  return withTransaction(pool, async (client) => {
    const locked = await lockRows(client, ids, `purged_at IS NULL AND ${FINISHED}`, options.skipLocked ?? false);
    if (locked.length === 0) return { ids: [], keys: [], segments: [] };
    const days = idRangeSql(daysOf(locked));
    const unpurged = await unpurgedJobIds(pool);
    const { rows } = await client.query<PurgeResult>(
      `WITH target AS (SELECT id, model_name, model_version, input_sha256, inputs, outputs FROM jobs WHERE id = ANY($1::uuid[]) AND ${days}),
       purged AS (
         UPDATE jobs SET inputs = '[]'::jsonb, outputs = NULL, input_data = NULL, output_data = NULL, metadata = '{}'::jsonb, webhook_url = NULL,
                error_message = NULL, input_sha256 = NULL, purged_at = now(), purge_reason = $2
           FROM target WHERE jobs.id = target.id AND ${idRangeSql(daysOf(locked), 'jobs.id')}
         RETURNING jobs.id),
       deliveries AS (DELETE FROM webhook_deliveries WHERE job_id = ANY($1::uuid[]))
       SELECT ARRAY(SELECT id::text FROM purged) AS ids,
              ARRAY(SELECT e->>'key' FROM target, ${TENSOR_KEYS(`target.inputs || COALESCE(target.outputs, '[]'::jsonb)`)}
                    EXCEPT ${sharedKeys(unpurged)}) AS keys,
              ARRAY(${unneededSegments(TARGET_SEGMENTS, groupDays(locked), unpurged)}) AS segments`,
      [locked, reason],
    );
    return rows[0]!;
  });
}

/**
 * Drops the input tensors of succeeded jobs (`inputs` `[]`, input_data NULL, `inputs_dropped_at`
 * set) and returns the S3 keys no other row references. Jobs that asked to
 * keep their inputs, purged ones and ones already dropped are skipped, and so
 * are failed, canceled and expired ones: they keep their inputs until they are
 * purged, so they can be retried.
 */
export async function dropInputs(pool: Pool, ids: string[], options: { skipLocked?: boolean } = {}): Promise<PurgeResult> {
  if (ids.length === 0) return { ids: [], keys: [], segments: [] };
  return withTransaction(pool, async (client) => {
    const condition = `inputs_dropped_at IS NULL AND purged_at IS NULL AND keep_inputs = false AND ${SUCCEEDED}`;
    const locked = await lockRows(client, ids, condition, options.skipLocked ?? false);
    if (locked.length === 0) return { ids: [], keys: [], segments: [] };
    const days = idRangeSql(daysOf(locked));
    const unpurged = await unpurgedJobIds(pool);
    const { rows } = await client.query<PurgeResult>(
      `WITH target AS (SELECT id, model_name, model_version, input_sha256, inputs, outputs FROM jobs WHERE id = ANY($1::uuid[]) AND ${days}),
       dropped AS (
         UPDATE jobs SET inputs = '[]'::jsonb, input_data = NULL, inputs_dropped_at = now() FROM target
          WHERE jobs.id = target.id AND ${idRangeSql(daysOf(locked), 'jobs.id')} RETURNING jobs.id)
       SELECT ARRAY(SELECT id::text FROM dropped) AS ids,
              ARRAY(SELECT e->>'key' FROM target, ${TENSOR_KEYS('target.inputs')} EXCEPT ${sharedKeys(unpurged)}) AS keys,
              ARRAY(${unneededSegments(TARGET_SEGMENTS, groupDays(locked), unpurged)}) AS segments`,
      [locked],
    );
    return rows[0]!;
  });
}

/**
 * Up to `limit` finished, unpurged jobs past their retention, oldest first. A
 * job's retention is its model's override, else its key's, else
 * `defaultRetentionS`. The scan is a range of jobs_purge_candidates_idx up to
 * the shortest retention anywhere; each row is then held to its own. Jobs that
 * still owe a webhook wait for it to be delivered or given up.
 */
export async function findExpiredJobIds(pool: Pool, options: { defaultRetentionS: number; limit: number }): Promise<string[]> {
  const shortest = await pool.query<{ s: number }>(
    'SELECT LEAST($1::int, (SELECT min(retention_s) FROM api_keys), (SELECT min(retention_s) FROM model_retention)) AS s',
    [options.defaultRetentionS],
  );
  const { rows } = await pool.query<{ id: string }>(
    `SELECT j.id FROM jobs j
       JOIN api_keys k ON k.id = j.owner_key_id
       LEFT JOIN model_retention m ON m.model_name = j.model_name
      WHERE ${idRangeSql(await unpurgedJobIds(pool), 'j.id')} AND j.purged_at IS NULL AND j.finished_at IS NOT NULL
        AND j.finished_at < now() - $3::int * interval '1 second'
        AND j.finished_at < now() - COALESCE(m.retention_s, k.retention_s, $1::int) * interval '1 second'
        AND NOT (j.webhook_url IS NOT NULL AND j.webhook_state IS NULL)
      ORDER BY j.finished_at
      LIMIT $2`,
    [options.defaultRetentionS, options.limit, shortest.rows[0]!.s],
  );
  return rows.map((r) => r.id);
}

/** Up to `limit` finished jobs whose inputs are past `inputRetentionS` and still there (not kept, not purged), oldest first. */
export async function findInputsToDrop(pool: Pool, options: { inputRetentionS: number; limit: number }): Promise<string[]> {
  const { rows } = await pool.query<{ id: string }>(
    `SELECT id FROM jobs
      WHERE ${idRangeSql(await unpurgedJobIds(pool))} AND inputs_dropped_at IS NULL AND purged_at IS NULL AND keep_inputs = false
        AND finished_at IS NOT NULL AND status = 'succeeded' AND finished_at <= now() - $1::int * interval '1 second'
      ORDER BY finished_at
      LIMIT $2`,
    [options.inputRetentionS, options.limit],
  );
  return rows.map((r) => r.id);
}

/** An S3 object under a job's prefix (`jobs/<day>/<jobId>/…`). */
export interface JobObject {
  key: string;
  jobId: string;
}

/**
 * Of these objects, the keys no row needs, for the caller to delete: neither
 * the job whose prefix holds it names it (unpurged) nor any unpurged
 * response-cache hit, which may name an object under another job's prefix,
 * one purged or gone (probed through jobs_cache_hit_keys_idx, migration 0020).
 * With `keepUnfinished` every object of a queued or running job is kept: a
 * running attempt stores its outputs before its row names them. Without it
 * (the worker, about its own refused outputs) only what a row names is kept.
 */
export async function findUnnamedJobObjects(pool: Pool, objects: JobObject[], options: { keepUnfinished: boolean }): Promise<string[]> {
  if (objects.length === 0) return [];
  const { rows } = await pool.query<{ key: string }>(
    `SELECT o.key FROM unnest($1::text[], $2::uuid[]) AS o(key, job_id)
      WHERE NOT EXISTS (SELECT 1 FROM jobs j WHERE j.id = o.job_id AND ${idRangeSql(daysOf(objects.map((o) => o.jobId)), 'j.id')}
                           AND j.purged_at IS NULL AND (($3 AND NOT (${FINISHED})) OR ${namesTensor('j', 'key', 'o.key')}))
        AND NOT EXISTS (SELECT 1 FROM jobs h WHERE ${idRangeSql(await unpurgedJobIds(pool), 'h.id')}
                           AND h.cached_from IS NOT NULL AND h.purged_at IS NULL AND ${namesTensor('h', 'key', 'o.key')})`,
    [objects.map((o) => o.key), objects.map((o) => o.jobId), options.keepUnfinished],
  );
  return rows.map((r) => r.key);
}

/**
 * Of these input segments (their names), those no row names, for the caller to delete: neither a job of the group that
 * wrote it (unpurged; a queued or running one names its inputs) nor an unpurged response-cache hit. The sweep's
 * backstop for a segment a drop or a purge left (two at once each saw the other's rows still naming it).
 */
export async function findUnnamedSegments(pool: Pool, names: string[]): Promise<string[]> {
  const named = names.flatMap((name) => {
    const ids = inputSegmentJobIds(name);
    return ids ? [{ name, ids: Object.values(ids) }] : [];
  });
  if (named.length === 0) return [];
  const days = groupDays(named.flatMap((n) => n.ids));
  const { rows } = await pool.query<{ name: string }>(unneededSegments('SELECT unnest($2::text[]) AS name', days, await unpurgedJobIds(pool)), [
    [],
    named.map((n) => n.name),
  ]);
  return rows.map((r) => r.name);
}
