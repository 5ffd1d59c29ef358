import type { RedisClient } from '../connection/connection.ts';
import { queueEpochKey } from '../names.ts';

/**
 * A key per model queue that lives as long as that queue's data does, in the
 * queue's own hash slot. Claiming them answers "has Redis lost any of these
 * queues since we last looked?": SET NX succeeds only where the key is missing
 * (a fresh Redis, a flush, a restart without persistence, one Cluster shard
 * that lost its data, a model seen for the first time), and then every
 * unfinished job must be checked against the queue. Returns the models whose
 * key was missing.
 */
export async function claimQueueEpochs(redis: RedisClient, prefix: string, models: readonly string[]): Promise<string[]> {
  const now = new Date().toISOString();
  const claimed = await Promise.all(models.map(async (model) => (await redis.set(queueEpochKey(prefix, model), now, 'NX')) === 'OK'));
  return models.filter((_, i) => claimed[i]);
}
