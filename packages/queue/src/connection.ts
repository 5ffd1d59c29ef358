import { Redis } from 'ioredis';

export type { Redis };

/**
 * Redis connections for BullMQ. Producers fail fast (no offline queue, one
 * retry) so the API can answer 503 while Redis is down instead of hanging;
 * consumers block and retry forever, as BullMQ workers require.
 */
export function createRedisConnection(url: string, role: 'producer' | 'consumer'): Redis {
  return new Redis(
    url,
    role === 'producer'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, retryStrategy: (n) => Math.min(n * 200, 2_000) }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true, retryStrategy: (n) => Math.min(n * 200, 2_000) },
  );
}

/** Returns Redis's maxmemory-policy; BullMQ needs `noeviction` or queue keys can vanish. */
export async function readMaxmemoryPolicy(redis: Redis): Promise<string | undefined> {
  const reply = (await redis.config('GET', 'maxmemory-policy')) as string[];
  return reply[1];
}
