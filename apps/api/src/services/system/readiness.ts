import { listLatestModels, type Pool } from '@inferq/db';
import { checkEvictionPolicy, listServedModels, type JobProducer, type RedisClient } from '@inferq/queue';

/** One readiness check: `detail` says what failed. */
export interface ReadinessCheck {
  ok: boolean;
  detail?: string;
}

/** Whether Postgres and Redis answer, each with its check. */
export interface Reachability {
  ok: boolean;
  postgres: ReadinessCheck;
  redis: ReadinessCheck;
}

/** What `/readyz` reports: only the Postgres and Redis checks are always there. */
export interface ReadinessReport {
  status: 'ok' | 'degraded';
  checks: {
    postgres: ReadinessCheck;
    redis: ReadinessCheck;
    redisEvictionPolicy?: ReadinessCheck;
    workers?: ReadinessCheck;
    storage?: ReadinessCheck;
  };
  modelsWithoutWorker: string[];
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
 * The API's readiness, for `/readyz` and the open inference protocol's `/v2/health/ready`. `storageSetup` is the
 * bucket's setup at start (background/storage-setup.ts), passed in by app.ts; tests that made their bucket leave it out.
 */
export function createReadiness(deps: { pool: Pool; redis: RedisClient; producer: JobProducer; storageSetup?: { check(): ReadinessCheck } }) {
  const { pool, redis, producer, storageSetup } = deps;

  /**
   * Whether the API can take requests: Postgres and Redis both answer. `/readyz` and `/v2/health/ready` answer 503 by
   * this one rule, so a load balancer reading either takes a replica out alike.
   */
  async function reachable(): Promise<Reachability> {
    const [postgres, redisCheck] = await Promise.all([runCheck(() => pool.query('SELECT 1')), runCheck(() => redis.ping())]);
    return { ok: postgres.ok && redisCheck.ok, postgres, redis: redisCheck };
  }

  // Read once it succeeds: the policy rarely changes, and managed Redis may refuse CONFIG.
  let evictionPolicy: ReadinessCheck | undefined;
  async function readEvictionPolicy(): Promise<ReadinessCheck | undefined> {
    if (evictionPolicy) return evictionPolicy;
    const policy = await checkEvictionPolicy(redis);
    if (policy === undefined) return undefined;
    evictionPolicy = policy.ok ? { ok: true } : { ok: false, detail: policy.detail };
    return evictionPolicy;
  }

  async function modelsWithoutWorker(): Promise<string[] | undefined> {
    try {
      const [models, served] = await Promise.all([listLatestModels(pool), listServedModels(redis, producer.prefix)]);
      // A model whose versions are all retired takes no job: it needs no worker.
      return models.filter((m) => !m.retiredAt && !served.has(m.name)).map((m) => m.name);
    } catch {
      return undefined; // Postgres or Redis down: their own checks say so.
    }
  }

  /**
   * Every check `/readyz` reports. Only `reachable` decides whether the replica takes requests: a wrong eviction
   * policy, a model without a live worker or a bucket not ready yet make the report `degraded`, no more.
   */
  async function readReadiness(): Promise<{ reachable: boolean; report: ReadinessReport }> {
    const [reach, policy, idle] = await Promise.all([reachable(), readEvictionPolicy(), modelsWithoutWorker()]);
    const workers = idle === undefined ? undefined : idle.length === 0 ? { ok: true } : { ok: false, detail: `no live worker serves ${idle.join(', ')}` };
    const storage = storageSetup?.check();
    const checks = {
      postgres: reach.postgres,
      redis: reach.redis,
      ...(policy && { redisEvictionPolicy: policy }),
      ...(workers && { workers }),
      ...(storage && { storage }),
    };
    const ok = Object.values(checks).every((c) => c.ok);
    return { reachable: reach.ok, report: { status: ok ? 'ok' : 'degraded', checks, modelsWithoutWorker: idle ?? [] } };
  }

  return { reachable, readReadiness };
}
export type Readiness = ReturnType<typeof createReadiness>;
