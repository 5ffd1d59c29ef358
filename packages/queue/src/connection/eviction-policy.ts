import { readMaxmemoryPolicy, type RedisClient } from './connection.ts';

/** Whether Redis may evict queue keys: BullMQ needs `noeviction`, under any other policy a full Redis drops jobs silently. */
export type EvictionPolicyCheck = { ok: true; policy: string } | { ok: false; policy: string; detail: string };

/**
 * Reads Redis's maxmemory-policy and says whether BullMQ can live with it. Undefined when it cannot be read: managed
 * Redis may refuse CONFIG, and an unknown policy is no reason to warn or to fail a check.
 */
export async function checkEvictionPolicy(client: RedisClient): Promise<EvictionPolicyCheck | undefined> {
  const policy = await readMaxmemoryPolicy(client).catch(() => undefined);
  if (policy === undefined) return undefined;
  if (policy === 'noeviction') return { ok: true, policy };
  return { ok: false, policy, detail: `maxmemory-policy is ${policy}; set noeviction or queued jobs can be evicted` };
}

/** Warns once, at a process's start, when Redis may evict queue keys; never rejects, since a warning is all it is. */
export async function warnOnEvictionPolicy(client: RedisClient, logger: { warn(fields: object, message: string): void }): Promise<void> {
  const check = await checkEvictionPolicy(client);
  if (check && !check.ok) logger.warn({ policy: check.policy }, 'redis maxmemory-policy is not noeviction; queue data may be evicted');
}
