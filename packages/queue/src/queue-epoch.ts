import type { RedisClient } from './connection.ts';
import { queueEpochKey } from './names.ts';

/**
 * A key that lives as long as the queue data does. Claiming it answers "has
 * Redis lost its data since we last looked?" in one call: SET NX succeeds only
 * when the key is missing — a fresh Redis, a flush, a restart without
 * persistence — and then every unfinished job must be checked against the queue.
 */
export async function claimQueueEpoch(redis: RedisClient, prefix: string): Promise<boolean> {
  return (await redis.set(queueEpochKey(prefix), new Date().toISOString(), 'NX')) === 'OK';
}
