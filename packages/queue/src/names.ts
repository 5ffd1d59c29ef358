// Every Redis key inferq writes starts with the deployment's prefix (QUEUE_PREFIX).
// A model's queue name is a Redis Cluster hash tag, so each queue's keys (and
// the fair-ordering state beside them) share one slot — what BullMQ's and our
// Lua scripts need — while different models spread over the cluster's shards.
// Every other key is a single-key record.

/** One queue per model; BullMQ rejects `:` in queue names, model names never contain one. */
export const queueNameFor = (model: string): string => `{infer.${model}}`;
export const JOB_NAME = 'infer.run';

/** The stem of every key of a model's queue (BullMQ's qualified name): `deleteKeysWithPrefix` with it deletes the queue and all of ours beside it. */
export const queueKeyStem = (prefix: string, model: string): string => `${prefix}:${queueNameFor(model)}`;
/**
 * One key of a model's queue, as BullMQ names it (`toKey(suffix)`): BullMQ's own (`prioritized`, `marker`, a job's hash
 * by its id) or ours beside them (`fair:<class>`, `group-extras`). For tests that look at Redis; callers use the producer.
 */
export const queueKey = (prefix: string, model: string, suffix: string): string => `${queueKeyStem(prefix, model)}:${suffix}`;

/** What names a queue's keys: a BullMQ Queue or Worker (`toKey`). */
export interface QueueKeys {
  toKey(type: string): string;
}
/** The group entries' bookkeeping beside a model queue, in its slot (queue-groups.ts; aging reads it too). */
export const groupKeys = (queue: QueueKeys) => ({
  members: queue.toKey('group-members'),
  sizes: queue.toKey('group-sizes'),
  extras: queue.toKey('group-extras'),
  held: queue.toKey('group-held'),
});

/** The hash of live workers' heartbeats. */
export const workerRegistryKey = (prefix: string): string => `${prefix}:workers`;
/** Present while Redis still holds the model's queue data (queue-epoch.ts): in the queue's slot, so it goes when that shard's data does. */
export const queueEpochKey = (prefix: string, model: string): string => queueKey(prefix, model, 'inferq-epoch');
/** A lease on a periodic pass that one worker of the fleet runs at a time. */
export const leaseKey = (prefix: string, pass: string): string => `${prefix}:lease:${pass}`;
/** Where a periodic pass that walks a long listing (the orphaned-object sweep) keeps its place between passes. */
export const passCursorKey = (prefix: string, pass: string): string => `${prefix}:cursor:${pass}`;
/** The namespace of the API's per-key rate limit counters. */
export const rateLimitNamespace = (prefix: string): string => `${prefix}:rate-limit:`;
