import type { Priority } from '@inferq/contracts';
import type { RedisClient } from '../connection/connection.ts';
import { luaScript } from '../lua-script.ts';
import { groupKeys, type QueueKeys } from '../names.ts';

// Fair ordering inside each priority class of a model queue. BullMQ serves
// the lowest priority number first, FIFO within a number. The number space
// (1 … 2^21 − 1) is cut into four ranges, one per class, so a class is
// always served before the next (jobs move up a class by aging, see
// priority-aging; the batch class does not age). Inside a class the number is a start tag of start-time
// fair queueing: a job starts where its key's previous job in the class
// finished, or where the class is now (its first waiting job) if that is
// later, and each job advances its key by 1 / weight. A key that floods the
// queue gets numbers far ahead; a key with a trickle starts at the front.

/** BullMQ's largest priority. */
const PRIORITY_LIMIT = 2 ** 21 - 1;
/** Numbers per class. */
export const PRIORITY_CLASSES: readonly Priority[] = ['high', 'normal', 'low', 'batch'];
export const CLASS_RANGE = Math.floor(PRIORITY_LIMIT / PRIORITY_CLASSES.length);

/** The BullMQ numbers of a class: [min, max]. */
export const classRange = (p: Priority): { min: number; max: number } => {
  const min = PRIORITY_CLASSES.indexOf(p) * CLASS_RANGE + 1;
  return { min, max: min + CLASS_RANGE - 1 };
};

/** Each class's first number: what every job of the class gets without fair ordering (FAIR_SCHEDULING=false: plain BullMQ priorities). */
export const BULL_PRIORITY = Object.fromEntries(PRIORITY_CLASSES.map((p) => [p, classRange(p).min])) as Record<Priority, number>;

/** The class of a BullMQ priority number. */
export const priorityOfBull = (bull: number): Priority =>
  PRIORITY_CLASSES[Math.min(PRIORITY_CLASSES.length - 1, Math.max(0, Math.floor((bull - 1) / CLASS_RANGE)))]!;

/**
 * The scripts, in src/lua (a header in each documents its KEYS and ARGV): fair
 * numbers for jobs about to be added (they share `includes/fair-tag.lua`:
 * start tags kept per key and class in a hash of the queue's, `…:fair:<class>`),
 * and aging, which re-adds waiting jobs as BullMQ's changePriority does and so
 * writes BullMQ's private keys (the prioritized set, its counter, the marker,
 * the job hash): bullmq is pinned to the version they were written against, and
 * tests/bullmq-key-layout.test.ts fails if that layout changes.
 */
const assignScript = luaScript('inferqFairAssign', 'fair-priority-assign-2.lua');
const promoteScript = luaScript('inferqFairPromote', 'fair-priority-promote-8.lua');

export interface FairJob {
  /** Whose job: the API key id; '' for a job that is a flow of its own (nothing is kept for it). */
  tenant: string;
  priority: Priority;
  /** The key's share against others at the same priority. @default 1 */
  weight?: number;
  /** Jobs in the entry (a group entry, queue-groups.ts): it advances its key by as many jobs' worth. @default 1 */
  size?: number;
}

/** BullMQ priorities for queue entries about to be added to `queue`, in order, fair between tenants within each class. */
export async function assignFairPriorities(connection: RedisClient, queue: QueueKeys, jobs: readonly FairJob[]): Promise<number[]> {
  if (jobs.length === 0) return [];
  const args = jobs.flatMap((j) => [j.tenant, String(PRIORITY_CLASSES.indexOf(j.priority)), String((j.size ?? 1) / (j.weight ?? 1))]);
  return (await assignScript(connection, [queue.toKey('prioritized'), queue.toKey('fair')], [CLASS_RANGE, queue.toKey(''), ...args])) as number[];
}

/**
 * Moves waiting jobs up to their target class (aging; a group member moves its entry), at most one per key, each to its
 * key's fair number there, in one round trip; returns how many moved.
 */
export async function promoteJobs(
  connection: RedisClient,
  queue: QueueKeys,
  jobs: ReadonlyArray<{ id: string; tenant: string; target: Priority }>,
): Promise<number> {
  if (jobs.length === 0) return 0;
  const args = jobs.flatMap((j) => [j.id, j.tenant, String(PRIORITY_CLASSES.indexOf(j.target))]);
  const groups = groupKeys(queue);
  return (await promoteScript(
    connection,
    [
      queue.toKey('prioritized'),
      queue.toKey('fair'),
      queue.toKey('pc'),
      queue.toKey('marker'),
      queue.toKey('meta'),
      groups.members,
      groups.sizes,
      groups.extras,
    ],
    [CLASS_RANGE, queue.toKey(''), ...args],
  )) as number;
}

/** Waiting jobs per class: one ZCOUNT per class range on the prioritized set. */
export async function countWaitingPerClass(connection: RedisClient, queue: QueueKeys): Promise<Record<Priority, number>> {
  const shift = 2 ** 32;
  const key = queue.toKey('prioritized');
  const counts = await Promise.all(
    PRIORITY_CLASSES.map((p) => {
      const { min, max } = classRange(p);
      return connection.zcount(key, min * shift, `(${(max + 1) * shift}`);
    }),
  );
  return Object.fromEntries(PRIORITY_CLASSES.map((p, i) => [p, counts[i]!])) as Record<Priority, number>;
}
