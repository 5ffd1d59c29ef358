import type { Pool } from '@inferq/db';
import type { RedisClient } from '@inferq/queue';

/** One readiness check: `detail` says what failed. */
export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/** Runs `probe` and reports how it went: a readiness answer carries a failure, it never throws one. */
async function runCheck(probe: () => Promise<unknown>): Promise<ReadinessCheck> {
  try {
    await probe();
    return { ok: true };
  } catch (err) {
    return { ok: false, detail: (err as Error).message };
  }
}

/**
 * Whether the API can take requests: Postgres and Redis both answer. `/readyz` and the open inference protocol's
 * `/v2/health/ready` answer 503 by this one rule, so a load balancer reading either takes a replica out alike.
 */
export async function checkReachable(deps: { pool: Pool; redis: RedisClient }): Promise<{ ok: boolean; postgres: ReadinessCheck; redis: ReadinessCheck }> {
  const [postgres, redis] = await Promise.all([runCheck(() => deps.pool.query('SELECT 1')), runCheck(() => deps.redis.ping())]);
  return { ok: postgres.ok && redis.ok, postgres, redis };
}
