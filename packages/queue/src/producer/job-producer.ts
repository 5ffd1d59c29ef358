import { Queue } from 'bullmq';
import type { InferJobPayload, Priority, QueueDepth } from '@inferq/contracts';
import { BULLMQ_OPTIONS } from '../connection/bullmq-options.ts';
import { QueueNotReadyError, type RedisClient } from '../connection/connection.ts';
import { jobOptions, type RetryOptions, DEFAULT_RETRY } from './job-options.ts';
import { assignFairPriorities, BULL_PRIORITY, promoteJobs } from './fair-priority.ts';
import { readQueueDepth } from './queue-depth.ts';
import { JOB_NAME, queueNameFor } from '../names.ts';
import { createCarriedInputs } from './carried-inputs.ts';
import { formEntries, groupEntryId, idsInLiveGroups, recordGroups, waitingGroupExtras, type GroupPayload } from './queue-groups.ts';

export interface EnqueueRequest {
  /** The job's id, which becomes the queue job's id. */
  jobId: string;
  model: string;
  priority: Priority;
  /** The API key whose job it is: jobs of one priority are ordered fairly between keys. Without one, the job is a flow of its own. */
  tenant?: string;
  /** The key's fair-share weight. @default 1 */
  weight?: number;
  payload: InferJobPayload;
  /** The bytes of the inputs `payload.inputs` describes, carried beside the queue job (carried-inputs.ts). */
  carriedBytes?: Uint8Array;
}

/**
 * A member of a group entry queued again as an entry of its own (queue-consumer.ts): failed with attempts left, or
 * given back unspent.
 */
export interface RequeueRequest {
  jobId: string;
  /**
   * Its payload as enqueued, the carried inputs' headers included: bytes no batch has taken yet (a member given back
   * before its batch ran) are found again, and a claim that finds none reads the row's, as a job alone's retry does.
   */
  payload: InferJobPayload;
  /** The BullMQ priority its entry holds: the fair position its enqueue gave it (aged, perhaps). */
  fairPriority: number;
  /** The attempts it has left, and the first backoff of its retries. */
  retry: RetryOptions;
  /** How long it waits before a consumer may take it: its backoff after a failure, 0 when given back. */
  delayMs: number;
}

/** A waiting job to move up to a higher priority class (priority aging). */
export interface PromoteRequest {
  /** The job's id: a job alone, or a member of a group entry (its entry moves). */
  id: string;
  /** Its API key: it takes the key's fair position in the target class. */
  tenant: string;
  target: Priority;
}

export interface JobProducer {
  /**
   * Adds jobs to their model queues, one round trip per model; a job id already
   * queued is not added twice. A failure may have added them anyway when
   * `writeOutcomeUnknown(err)` (sent, no answer).
   */
  enqueueJobs(requests: EnqueueRequest[]): Promise<void>;
  /**
   * Queues group members again, each an entry of its own, at the fair position its entry holds: the key paid for the
   * job once, at its enqueue, and BullMQ keeps a job alone's number through a retry or a give-back in the same way (a
   * fresh fair number would charge the key again and put the job behind the key's later ones). No readiness check: the
   * caller is a consumer, whose connection waits for Redis, and a refusal would fail the whole entry.
   */
  requeueJobs(model: string, requests: RequeueRequest[]): Promise<void>;
  /** Ids among `ids` that have a queue job in the model's queue, alone or as a member of a group entry. */
  findQueuedIds(model: string, ids: string[]): Promise<Set<string>>;
  /** Jobs waiting to run in a model queue (every priority, retry backoff included, each member of a group entry; held ones not). */
  backlog(model: string): Promise<number>;
  /** The model queue's jobs right now: waiting per priority, held, backing off (each member of a group entry counted), and whether it is paused. */
  readDepth(model: string): Promise<Omit<QueueDepth, 'workers'>>;
  /**
   * Removes a waiting job and its carried inputs; a job a worker holds, or a member of a group entry, is left alone
   * (returns false): its claim skips it once its row says it is not queued.
   */
  removeJob(model: string, id: string): Promise<boolean>;
  /**
   * Moves waiting jobs up to their target class, at most one per key, each to its key's fair number there, in one round
   * trip; returns how many moved. Jobs held by a worker, backing off, or already in their class stay where they are.
   */
  promoteJobs(model: string, jobs: readonly PromoteRequest[]): Promise<number>;
  /** Stops workers taking jobs from the model's queue (a BullMQ global pause); jobs are still added and kept. Idempotent. */
  pause(model: string): Promise<void>;
  /** Lets workers take jobs from the model's queue again. Idempotent. */
  resume(model: string): Promise<void>;
  /** Whether the model's queue is paused: BullMQ's own flag, the one record of it. */
  isPaused(model: string): Promise<boolean>;
  /** The key prefix of every queue (and of the worker registry). */
  readonly prefix: string;
  close(): Promise<void>;
}

export interface JobProducerOptions {
  connection: RedisClient;
  prefix: string;
  retry?: RetryOptions;
  /** Fair ordering between keys within each priority (FAIR_SCHEDULING); false: plain BullMQ priorities, FIFO within each. @default true */
  fair?: boolean;
  /** Jobs of one enqueue call with the same priority, key and weight share a queue entry, at most this many (QUEUE_GROUP_MAX, queue-groups.ts). @default 1 */
  groupMax?: number;
}

export function createJobProducer(options: JobProducerOptions): JobProducer {
  const queues = new Map<string, Queue>();
  const retry = options.retry ?? DEFAULT_RETRY;
  const carried = createCarriedInputs(options.connection, options.prefix);
  const queueFor = (model: string): Queue => {
    let q = queues.get(model);
    if (!q) {
      q = new Queue(queueNameFor(model), { connection: options.connection, prefix: options.prefix, ...BULLMQ_OPTIONS });
      // Connection errors reach the caller through the failed call, and the
      // connection's owner logs them; the queue's own echo would be noise.
      q.on('error', () => {});
      queues.set(model, q);
    }
    return q;
  };
  // BullMQ waits for a connection that is not ready; a producer must fail at
  // once instead, so a submit answers 503 while Redis is down, never hangs.
  const ensureReady = () => {
    if (options.connection.status !== 'ready') throw new QueueNotReadyError(options.connection.status);
  };
  return {
    prefix: options.prefix,
    async enqueueJobs(requests) {
      if (requests.length === 0) return;
      ensureReady();
      const byModel = new Map<string, EnqueueRequest[]>();
      for (const r of requests) {
        const group = byModel.get(r.model) ?? [];
        group.push(r);
        byModel.set(r.model, group);
      }
      await Promise.all(
        [...byModel].map(async ([model, rs]) => {
          const queue = queueFor(model);
          const entries = formEntries(rs, options.groupMax ?? 1);
          const priorities =
            options.fair === false
              ? entries.map((e) => BULL_PRIORITY[e[0]!.priority])
              : await assignFairPriorities(
                  options.connection,
                  queue,
                  entries.map((e) => ({ tenant: e[0]!.tenant ?? '', priority: e[0]!.priority, weight: e[0]!.weight, size: e.length })),
                );
          // Sent first on the same connection, so a worker that takes a job finds its bytes (or reads its row) and its group's size.
          const written = carried.write(
            model,
            rs.flatMap((r) => (r.carriedBytes ? [{ jobId: r.jobId, bytes: r.carriedBytes }] : [])),
          );
          const groups = entries.filter((e) => e.length > 1);
          const recorded = recordGroups(
            options.connection,
            queue,
            groups.map((e) => ({ id: groupEntryId(e[0]!.jobId), memberIds: e.map((r) => r.jobId), priority: e[0]!.priority })),
          );
          await queue.addBulk(
            entries.map((e, i) =>
              e.length === 1
                ? { name: JOB_NAME, data: e[0]!.payload, opts: jobOptions(e[0]!.jobId, priorities[i]!, retry) }
                : {
                    name: JOB_NAME,
                    data: { members: e.map((r) => ({ jobId: r.jobId, payload: r.payload })) } satisfies GroupPayload,
                    opts: jobOptions(groupEntryId(e[0]!.jobId), priorities[i]!, retry),
                  },
            ),
          );
          await recorded;
          await written;
        }),
      );
    },
    async requeueJobs(model, requests) {
      if (requests.length === 0) return;
      await queueFor(model).addBulk(
        requests.map((r) => ({ name: JOB_NAME, data: r.payload, opts: { ...jobOptions(r.jobId, r.fairPriority, r.retry), delay: r.delayMs } })),
      );
    },
    async findQueuedIds(model, ids) {
      if (ids.length === 0) return new Set();
      ensureReady();
      const q = queueFor(model);
      const keyPrefix = q.toKey('');
      const pipeline = options.connection.pipeline();
      for (const id of ids) pipeline.exists(`${keyPrefix}${id}`);
      const replies = (await pipeline.exec()) ?? [];
      const alone = ids.filter((_, i) => replies[i]?.[1] === 1);
      const grouped = await idsInLiveGroups(
        options.connection,
        q,
        ids.filter((_, i) => replies[i]?.[1] !== 1),
      );
      return new Set([...alone, ...grouped]);
    },
    async backlog(model) {
      ensureReady();
      const q = queueFor(model);
      const [entries, extras] = await Promise.all([q.count(), waitingGroupExtras(options.connection, q)]);
      // No entry waiting, no member waiting (a count left over by an add that failed after it shows nowhere).
      return entries === 0 ? 0 : entries + Object.values(extras).reduce((a, b) => a + b, 0);
    },
    async pause(model) {
      ensureReady();
      await queueFor(model).pause();
    },
    async resume(model) {
      ensureReady();
      await queueFor(model).resume();
    },
    async isPaused(model) {
      ensureReady();
      return queueFor(model).isPaused();
    },
    async promoteJobs(model, jobs) {
      if (jobs.length === 0) return 0;
      ensureReady();
      return promoteJobs(options.connection, queueFor(model), jobs);
    },
    async readDepth(model) {
      ensureReady();
      return readQueueDepth(options.connection, queueFor(model), model);
    },
    async removeJob(model, id) {
      try {
        ensureReady();
        // Its carried inputs go with it (they would expire anyway): the budget counts only waiting jobs.
        void carried.drop(model, [id]);
        return (await queueFor(model).remove(id)) === 1;
      } catch {
        return false;
      }
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      queues.clear();
    },
  };
}
