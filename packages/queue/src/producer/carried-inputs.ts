import type { StoredTensor } from '@inferq/contracts';
import type { RedisClient } from '../connection/connection.ts';
import { queueKey } from '../names.ts';

// A queued job's inputs, carried in Redis beside its queue job while it waits (QUEUE_CARRIED_INPUTS_MB), so the
// worker's claim reads only the columns that fence it and not each input out of TOAST, nor an object out of S3 (the
// API carries the bytes it holds, those it keeps in S3 too). Postgres and S3 keep the inputs either way (the record):
// a job whose bytes are not here (expired, evicted, lost with a failover, queued again by the reconciler, or retried
// after its first batch) has them read from its row or its objects, as before.
//
// The bytes travel as they are, in a string key of their own, not in the queue job's JSON: as base64 in the entry,
// a 12 KiB input cost the worker more CPU (JSON parsing, decoding, the garbage collector) than it saved Postgres.

/** How long carried bytes wait: a job still queued after an hour has its claim read them from its row. */
export const CARRIED_INPUTS_TTL_MS = 3_600_000;

/** The longest a batch waits for its carried bytes before it reads its rows' inputs instead (a Redis failing over). */
const READ_TIMEOUT_MS = 1_000;

/** Redis's own cost of a key, beyond its value, in the budget's estimate. */
const KEY_OVERHEAD_BYTES = 128;

/** A job's carried bytes: beside its queue job, in its queue's slot, so a batch's are one MGET on a Cluster too. */
const carriedKey = (prefix: string, model: string, jobId: string): string => queueKey(prefix, model, `${jobId}:inputs`);

/** What carrying a job's inputs adds to Redis; undefined when one's bytes are not at hand (an object not read in). */
export function carriedInputBytes(inputs: readonly StoredTensor[]): number | undefined {
  let total = KEY_OVERHEAD_BYTES;
  for (const t of inputs) {
    if (t.data === undefined) return undefined;
    total += t.bytes;
  }
  return total;
}

/**
 * Whether a job carries its inputs: every one's bytes at hand, and the model's `waiting` jobs, were each to carry as much,
 * within `budgetBytes` of Redis memory (QUEUE_CARRIED_INPUTS_MB; 0: never). The backlog is the one last read, so a
 * burst between two reads may pass the budget by what the API replicas admit meanwhile; an unknown one carries nothing.
 */
export function carriesInputs(inputs: readonly StoredTensor[], waiting: number | undefined, budgetBytes: number): boolean {
  const bytes = carriedInputBytes(inputs);
  return bytes !== undefined && waiting !== undefined && (waiting + 1) * bytes <= budgetBytes;
}

/** Inputs with their bytes packed for carrying: their headers with each one's offset (`at`; an object's key left out), and their bytes end to end. */
export function packCarried(inputs: readonly StoredTensor[]): { headers: StoredTensor[]; bytes: Buffer } {
  let at = 0;
  const headers = inputs.map((t) => {
    const header = { name: t.name, datatype: t.datatype, shape: t.shape, bytes: t.bytes, at };
    at += t.bytes;
    return header;
  });
  return { headers, bytes: Buffer.concat(inputs.map((t) => t.data!)) };
}

/** The inputs back from their headers and bytes; undefined when the bytes are not exactly theirs. */
export function unpackCarried(headers: readonly StoredTensor[], bytes: Buffer | null): StoredTensor[] | undefined {
  if (!bytes || headers.reduce((n, t) => n + t.bytes, 0) !== bytes.byteLength) return undefined;
  const inputs: StoredTensor[] = [];
  for (const { at, ...head } of headers) {
    if (at === undefined) return undefined;
    inputs.push({ ...head, data: new Uint8Array(bytes.buffer, bytes.byteOffset + at, head.bytes) });
  }
  return inputs;
}

/** Writes, takes and drops carried bytes; the queue's connection, whatever the topology. */
export function createCarriedInputs(connection: RedisClient, prefix: string) {
  const keys = (model: string, ids: readonly string[]) => ids.map((id) => carriedKey(prefix, model, id));
  return {
    /** Sends the writes now, ahead of the queue jobs the caller adds next on the same connection; resolves once answered, never rejects. */
    write(model: string, jobs: ReadonlyArray<{ jobId: string; bytes: Uint8Array }>): Promise<void> {
      if (jobs.length === 0) return Promise.resolve();
      const pipeline = connection.pipeline();
      for (const j of jobs)
        pipeline.set(carriedKey(prefix, model, j.jobId), Buffer.from(j.bytes.buffer, j.bytes.byteOffset, j.bytes.byteLength), 'PX', CARRIED_INPUTS_TTL_MS);
      // A write that fails leaves the claim to read the inputs from Postgres.
      return pipeline.exec().then(
        () => undefined,
        () => undefined,
      );
    },
    /**
     * Each job's bytes, null where Redis has none, and drops them in the same round trip: a job that runs again (a
     * retry, a release, a batch that failed) reads its row's. All null while Redis is not answering (the worker's
     * connection waits for it rather than failing, and a batch must not: its rows hold the inputs too); bytes not
     * dropped then are left to their expiry.
     */
    async take(model: string, ids: readonly string[]): Promise<Array<Buffer | null>> {
      const none = ids.map(() => null);
      if (ids.length === 0 || connection.status !== 'ready') return none;
      const named = keys(model, ids);
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<null[]>((resolve) => (timer = setTimeout(() => resolve(none), READ_TIMEOUT_MS)));
      const taken = connection
        .pipeline()
        .mgetBuffer(...named)
        .unlink(...named)
        .exec()
        .then((replies) => {
          const [err, bytes] = replies?.[0] ?? [new Error('no reply')];
          return err ? none : (bytes as Array<Buffer | null>);
        })
        .catch(() => none);
      try {
        return await Promise.race([taken, late]);
      } finally {
        clearTimeout(timer);
      }
    },
    /** Drops jobs' bytes (a queue entry that was never added); left to their expiry while Redis is not answering. */
    async drop(model: string, ids: readonly string[]): Promise<void> {
      if (ids.length > 0 && connection.status === 'ready') await connection.unlink(...keys(model, ids)).catch(() => 0);
    },
  };
}
export type CarriedInputs = ReturnType<typeof createCarriedInputs>;
