import type { InferJobPayload, Priority } from '@inferq/contracts';
import type { RedisClient } from '../connection/connection.ts';
import { PRIORITY_CLASSES } from './fair-priority.ts';
import { luaScript } from '../lua-script.ts';
import { groupKeys as keysOf, type QueueKeys } from '../names.ts';

// Several jobs as one queue entry (QUEUE_GROUP_MAX). BullMQ's fetch, lock, acknowledgement and events are paid once
// an entry: with an entry a job they are the floor under a worker's bookkeeping, with k jobs an entry about 1/k of it
// (docs/architecture.md, step 7). The jobs of one enqueue call (the API's commit group, a bulk batch's slice) with the
// same priority class, key and weight share an entry; the consumer hands each member to its holder with a handle of
// its own, and the entry ends when every handle is used (queue-consumer.ts).
//
// Beside the entry, in the queue's slot, written before it on the same connection (as carried inputs are):
// - `group-members`: member job id -> entry id, so the reconciler finds a member's entry (findQueuedIds) and aging
//   moves a member's entry (fair-priority-promote); dropped when the entry ends;
// - `group-sizes`: a waiting entry's members less one, and `group-extras`: their sum per class, so depth, admission
//   and the backlog gauge count jobs, not entries; an entry's size moves to `group-held` when a worker first takes
//   it, and leaves that when the entry ends, so the held count is in jobs too.
// Postgres stays the record: a member whose entry is lost is queued again alone by the reconciler, and a job queued
// twice runs once (the claim and the completion are fenced by its attempt).

/** One job of a group entry: its id and the payload it would have had as an entry of its own. */
export interface GroupMember {
  jobId: string;
  payload: InferJobPayload;
}

/** A group entry's data. */
export interface GroupPayload {
  members: GroupMember[];
}

export const isGroupPayload = (data: unknown): data is GroupPayload =>
  typeof data === 'object' && data !== null && Array.isArray((data as Partial<GroupPayload>).members);

/** A group entry's queue id: its first member's, marked (an enqueue sent twice adds it once, as a job alone). */
export const groupEntryId = (firstJobId: string): string => `group-${firstJobId}`;

/**
 * Requests as queue entries, in order: those with equal priority class, key and weight share an entry of at most `max`
 * (a new one begins when one is full); `max` 1 makes each its own.
 */
export function formEntries<R extends { priority: Priority; tenant?: string; weight?: number }>(requests: readonly R[], max: number): R[][] {
  if (max <= 1) return requests.map((r) => [r]);
  const open = new Map<string, R[]>();
  const entries: R[][] = [];
  for (const r of requests) {
    const key = `${r.priority}\u0000${r.tenant ?? ''}\u0000${r.weight ?? 1}`;
    let entry = open.get(key);
    if (!entry || entry.length >= max) {
      entry = [];
      open.set(key, entry);
      entries.push(entry);
    }
    entry.push(r);
  }
  return entries;
}

const takenScript = luaScript('inferqGroupTaken', 'queue-group-taken-3.lua');

/**
 * Records group entries about to be added: sent now, ahead of the entries the caller adds next on the same connection,
 * so a worker that takes one finds its size; resolves once answered. Plain commands in one pipeline, not a script: a
 * script's first call on a connection may be resent (NOSCRIPT, then EVAL) after the entries. An entry recorded twice
 * (no caller sends an enqueue twice) would count its members twice until its class has nothing waiting.
 */
export async function recordGroups(
  connection: RedisClient,
  queue: QueueKeys,
  entries: ReadonlyArray<{ id: string; memberIds: readonly string[]; priority: Priority }>,
): Promise<void> {
  if (entries.length === 0) return;
  const keys = keysOf(queue);
  const pipeline = connection.pipeline();
  for (const e of entries) {
    pipeline.hset(keys.members, ...e.memberIds.flatMap((id) => [id, e.id]));
    pipeline.hset(keys.sizes, e.id, e.memberIds.length - 1);
    pipeline.hincrby(keys.extras, String(PRIORITY_CLASSES.indexOf(e.priority)), e.memberIds.length - 1);
  }
  await pipeline.exec();
}

/** A worker took the entry: its members count as held, not waiting (the first time only). */
export async function groupTaken(connection: RedisClient, queue: QueueKeys, entryId: string, priority: Priority): Promise<void> {
  const keys = keysOf(queue);
  await takenScript(connection, [keys.sizes, keys.extras, keys.held], [entryId, PRIORITY_CLASSES.indexOf(priority)]);
}

/** The entry has ended (its members done, or queued again alone): they no longer name it, nor count as held. */
export async function groupEnded(connection: RedisClient, queue: QueueKeys, entryId: string, memberIds: readonly string[]): Promise<void> {
  const keys = keysOf(queue);
  const pipeline = connection.pipeline();
  if (memberIds.length > 0) pipeline.hdel(keys.members, ...memberIds);
  pipeline.hdel(keys.held, entryId);
  await pipeline.exec();
}

/** Members of held group entries beyond each entry's first: what BullMQ's count of held entries leaves out. */
export async function heldGroupExtras(connection: RedisClient, queue: QueueKeys): Promise<number> {
  return (await connection.hvals(keysOf(queue).held)).reduce((n, v) => n + Number(v), 0);
}

/** Members of waiting group entries beyond each entry's first, per class: what BullMQ's counts leave out. */
export async function waitingGroupExtras(connection: RedisClient, queue: QueueKeys): Promise<Record<Priority, number>> {
  const counts = await connection.hgetall(keysOf(queue).extras);
  return Object.fromEntries(PRIORITY_CLASSES.map((p, i) => [p, Math.max(0, Number(counts[String(i)] ?? 0))])) as Record<Priority, number>;
}

/** The ids among `ids` that are members of a group entry the queue still has. */
export async function idsInLiveGroups(connection: RedisClient, queue: QueueKeys, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const entries = await connection.hmget(keysOf(queue).members, ...ids);
  const named = [...new Set(entries.filter((e): e is string => e !== null))];
  if (named.length === 0) return new Set();
  const pipeline = connection.pipeline();
  for (const e of named) pipeline.exists(queue.toKey(e));
  const replies = (await pipeline.exec()) ?? [];
  const live = new Set(named.filter((_, i) => replies[i]?.[1] === 1));
  return new Set(ids.filter((_, i) => entries[i] !== null && live.has(entries[i]!)));
}
