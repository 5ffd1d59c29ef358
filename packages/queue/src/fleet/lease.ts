import type { RedisClient } from '../connection/connection.ts';
import { leaseKey } from '../names.ts';

/**
 * A lease on a periodic pass (priority aging, …) that one process of the fleet
 * runs at a time: SET NX with an expiry. Returns whether this caller took it.
 */
export async function takeLease(redis: RedisClient, prefix: string, pass: string, ms: number): Promise<boolean> {
  return (await redis.set(leaseKey(prefix, pass), '1', 'PX', ms, 'NX')) === 'OK';
}

/** Lets the next pass start before the lease would expire. */
export async function releaseLease(redis: RedisClient, prefix: string, pass: string): Promise<void> {
  await redis.del(leaseKey(prefix, pass));
}

/**
 * Runs `pass` if this caller takes its lease, releasing it afterwards (a
 * holder that dies lets it expire after `ms`); undefined when another
 * process holds it.
 */
export async function withLease<T>(redis: RedisClient, prefix: string, pass: string, ms: number, run: () => Promise<T>): Promise<T | undefined> {
  if (!(await takeLease(redis, prefix, pass, ms))) return undefined;
  try {
    return await run();
  } finally {
    await releaseLease(redis, prefix, pass).catch(() => {});
  }
}
