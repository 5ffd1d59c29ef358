import { createRedisConnection, parseRedisUrl } from '@inferq/queue';
import { processName } from './process-cpu.ts';

/** Calls per command, from INFO commandstats (`cmdstat_hget:calls=12,usec=…`), command names as Redis gives them. */
export function parseCommandstats(info: string): Map<string, number> {
  const calls = new Map<string, number>();
  for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) calls.set(match[1]!, Number(match[2]));
  return calls;
}

/** The server's pid from INFO server; null when absent. */
export const parseRedisPid = (info: string): number | null => {
  const pid = /^process_id:(\d+)/m.exec(info)?.[1];
  return pid === undefined ? null : Number(pid);
};

/** Calls per command between two readings, leaving out INFO (the readings' own). */
export function commandDeltas(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const deltas = new Map<string, number>();
  for (const [name, n] of after) {
    const d = n - (before.get(name) ?? 0);
    if (d > 0 && name !== 'info') deltas.set(name, d);
  }
  return deltas;
}

export interface RedisReading {
  calls: Map<string, number>;
  /** The server's pid when it runs on this machine (its /proc entry is a redis-server), else null. */
  localPid: number | null;
}

/** Whether `redisUrl` names one node: a Cluster's or Sentinel group's INFO would be one node's of several, so those are not read. */
export const isSingleNode = (redisUrl: string): boolean => parseRedisUrl(redisUrl).kind === 'single';

/** Reads INFO server and commandstats from one Redis node. */
export async function readRedis(redisUrl: string): Promise<RedisReading> {
  // A consumer connection queues the INFO until it is connected; a producer one would fail it.
  const redis = createRedisConnection(redisUrl, 'consumer');
  try {
    const [server, stats] = [await redis.info('server'), await redis.info('commandstats')];
    const pid = parseRedisPid(server);
    const host = new URL(redisUrl).hostname;
    const local = pid !== null && ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(host) && /redis/.test(processName(pid) ?? '');
    return { calls: parseCommandstats(stats), localPid: local ? pid : null };
  } finally {
    redis.disconnect();
  }
}
