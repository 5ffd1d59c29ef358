import { createRedisConnection, primariesOf, queueNameFor, type RedisClient } from '@inferq/queue';
import { mlpRows, startRedisCluster } from '@inferq/test-utils';
import { base64Body, registerModelAs, runBurst, SHIPPED_WORKER_ENV } from '../driver.ts';
import type { Scenario } from '../scenario.ts';
import { round } from '../stats.ts';

const MODELS = 4;
const CONCURRENCY = 128;

/** Commands served so far by each primary (INFO commandstats, every command summed), by "host:port". */
async function commandsPerNode(client: RedisClient): Promise<Map<string, number>> {
  const counts = new Map<string, number>();
  for (const node of await primariesOf(client)) {
    const info = await node.info('commandstats');
    const calls = [...info.matchAll(/calls=(\d+)/g)].reduce((n, m) => n + Number(m[1]), 0);
    counts.set(`${node.options.host}:${node.options.port}`, calls);
  }
  return counts;
}

/** The primary ("host:port") that owns a key's slot. */
async function ownerOf(client: RedisClient, key: string): Promise<string> {
  const [node] = await primariesOf(client);
  const slot = (await node!.cluster('KEYSLOT', key)) as number;
  const ranges = await node!.cluster('SLOTS');
  const range = ranges.find(([lo, hi]) => slot >= lo && slot <= hi);
  return `${range![2]![0]}:${range![2]![1]}`;
}

/** Model names whose queues land on every shard: the first candidates that cover each primary, then any, up to `count`. */
async function spreadNames(client: RedisClient, count: number): Promise<Array<{ name: string; node: string }>> {
  const shards = (await primariesOf(client)).length;
  const picked: Array<{ name: string; node: string }> = [];
  for (let i = 0; picked.length < count && i < 200; i++) {
    const name = `mlp-${i}`;
    const node = await ownerOf(client, queueNameFor(name));
    const covered = new Set(picked.map((p) => p.node));
    if (!covered.has(node) || covered.size >= shards) picked.push({ name, node });
  }
  return picked;
}

export const redisCluster: Scenario = {
  id: '11',
  title: 'Redis Cluster: four models on three shards, commands per node',
  async run(ctx) {
    const cluster = await startRedisCluster();
    const client = createRedisConnection(cluster.url, 'consumer');
    try {
      const models = await spreadNames(client, MODELS);
      const stack = await ctx.startStack({}, { REDIS_URL: cluster.url });
      try {
        for (const m of models) await registerModelAs(stack, m.name, 'mlp', { maxBatchSize: '64', maxBatchDelayMs: '2' });
        await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1' });
        const bodies = models.map((m) => base64Body(m.name, 'features', [1, 64], mlpRows(1, 1)));
        const body = (i: number) => bodies[i % bodies.length]!();
        await runBurst(stack, ctx.size(400, 8), CONCURRENCY, body);
        const jobs = ctx.size(20_000, 40);
        const before = await commandsPerNode(client);
        const burst = await runBurst(stack, jobs, CONCURRENCY, body);
        const after = await commandsPerNode(client);
        const rows = [...after].map(([node, calls]) => {
          const delta = calls - (before.get(node) ?? 0);
          const held = models.filter((m) => m.node === node).map((m) => m.name);
          return [node, held.join(', ') || '(none)', delta, round(delta / burst.spanS, 0), round(delta / jobs, 1)];
        });
        const perNode = rows.map((r) => r[3] as number);
        return {
          id: '11',
          title: this.title,
          metrics: {
            jobs,
            shards: rows.length,
            e2e_jobs_per_s: round(burst.jobsPerS, 0),
            span_s: round(burst.spanS, 2),
            busiest_node_ops_per_s: Math.max(...perNode),
            quietest_node_ops_per_s: Math.min(...perNode),
            failed_jobs: burst.failed,
          },
          goals: [],
          table: { columns: ['primary', 'model queues on it', 'commands', 'ops/s', 'commands per job'], rows },
          notes: [
            `${jobs} one-row MLP jobs spread evenly over ${models.length} models (${models.map((m) => m.name).join(', ')}), ` +
              `${CONCURRENCY} in flight, one worker.`,
            'A real 3-primary/3-replica Redis Cluster on loopback (test-utils startRedisCluster); commands from INFO commandstats on each primary, ' +
              'before and after the burst. Each model queue is one hash tag, so its commands go to one shard; ' +
              'the registry, leases and rate-limit counters are single keys on whichever shard owns them.',
          ],
        };
      } finally {
        await stack.close();
      }
    } finally {
      client.disconnect();
      await cluster.close();
    }
  },
};
