import type { Priority } from '@inferq/contracts';
import { registerModelAs, SHIPPED_WORKER_ENV, submitJobs, submitJobsAtRate, waitForFinished } from '../driver.ts';
import type { Scenario } from '../scenario.ts';
import { percentile, round } from '../stats.ts';

const IMAGE_SHAPE = [1, 3, 32, 32];
/** Tenants that trickle work in while a flood drains, each at its own priority and rate. */
const TRICKLES: Array<{ name: string; priority: Priority; ratePerS: number }> = [
  { name: 'trickle-normal', priority: 'normal', ratePerS: 20 },
  { name: 'trickle-high', priority: 'high', ratePerS: 10 },
  { name: 'trickle-low', priority: 'low', ratePerS: 10 },
];
const AGING_S = 1;

/**
 * One tenant floods the CNN's queue with normal jobs while no worker runs;
 * then a worker starts and three other tenants trickle jobs in at high,
 * normal and low priority while the flood drains. Queue wait per tenant, with
 * inferq's fair scheduling and aging and with plain BullMQ priorities (strict
 * classes, FIFO within each).
 */
export const fairness: Scenario = {
  id: '10',
  title: 'Fairness: queue wait per tenant and priority while another tenant floods the queue, against plain BullMQ priorities',
  async run(ctx) {
    const floodJobs = ctx.size(24_000, 40);
    const trickleS = ctx.size(8, 1);
    const image = Buffer.from(new Float32Array(3 * 32 * 32).map((_, i) => Math.sin(i)).buffer).toString('base64');
    const job = (priority: Priority) => () => ({ model: 'cnn', priority, inputs: [{ name: 'image', datatype: 'FP32', shape: IMAGE_SHAPE, data: image }] });

    const run = async (fair: boolean) => {
      const stack = await ctx.startStack({ FAIR_SCHEDULING: String(fair) });
      try {
        // Small batches: the flood drains slowly enough for the trickles to run while it is still there.
        await registerModelAs(stack, 'cnn', 'cnn', { maxBatchSize: '4', maxBatchDelayMs: '2' });
        const keys = new Map<string, { id: string; secret: string }>();
        for (const name of ['flood', ...TRICKLES.map((t) => t.name)]) {
          const res = await stack.request('POST', '/v1/keys', { name, scopes: ['jobs:read', 'jobs:write'] });
          keys.set(name, { id: res.json.id, secret: res.json.secret });
        }
        await submitJobs(stack.baseUrl, floodJobs, 64, job('normal'), keys.get('flood')!.secret);
        await stack.startWorker({ ...SHIPPED_WORKER_ENV, INTRA_OP_THREADS: '1', PRIORITY_AGING_S: fair ? String(AGING_S) : '0' });
        const trickled = await Promise.all(
          TRICKLES.map((t) => submitJobsAtRate(stack.baseUrl, Math.max(1, t.ratePerS * trickleS), t.ratePerS, job(t.priority), keys.get(t.name)!.secret)),
        );
        await waitForFinished(stack.ctx.pool, floodJobs + trickled.reduce((n, r) => n + r.ids.length, 0), 300_000);
        // Only jobs submitted while the flood still had jobs waiting: what a trickle sees behind a flood, whatever the timing of the run.
        const { rows } = await stack.ctx.pool.query<{ owner: string; queue_ms: number[] }>(
          `SELECT owner_key_id AS owner, array_agg(queue_ms) AS queue_ms FROM jobs
            WHERE status = 'succeeded' AND created_at < (SELECT max(started_at) FROM jobs WHERE owner_key_id = $1)
            GROUP BY 1`,
          [keys.get('flood')!.id],
        );
        const waits = new Map(rows.map((r) => [r.owner, r.queue_ms]));
        const {
          rows: [span],
        } = await stack.ctx.pool.query<{ s: number }>('SELECT extract(epoch FROM max(finished_at) - min(started_at))::float AS s FROM jobs');
        return { keys, waits, drainS: span!.s };
      } finally {
        await stack.close();
      }
    };
    const fair = await run(true);
    const plain = await run(false);
    const row = (name: string) => {
      const f = fair.waits.get(fair.keys.get(name)!.id) ?? [];
      const p = plain.waits.get(plain.keys.get(name)!.id) ?? [];
      return [name, f.length, round(percentile(f, 50), 0), round(percentile(f, 99), 0), round(percentile(p, 50), 0), round(percentile(p, 99), 0)];
    };
    const rows = ['flood', ...TRICKLES.map((t) => t.name)].map(row);
    for (const r of rows) ctx.log(`  ${r[0]}: fair p50 ${r[2]} p99 ${r[3]} ms; plain p50 ${r[4]} p99 ${r[5]} ms`);
    const metric = (name: string, col: number) => rows.find((r) => r[0] === name)![col] as number | null;
    return {
      id: '10',
      title: this.title,
      metrics: {
        flood_jobs: floodJobs,
        drain_s_fair: round(fair.drainS, 1),
        drain_s_plain: round(plain.drainS, 1),
        trickle_normal_p99_ms_fair: metric('trickle-normal', 3),
        trickle_normal_p99_ms_plain: metric('trickle-normal', 5),
        trickle_low_p99_ms_fair: metric('trickle-low', 3),
        trickle_low_p99_ms_plain: metric('trickle-low', 5),
        trickle_high_p99_ms_fair: metric('trickle-high', 3),
        trickle_high_p99_ms_plain: metric('trickle-high', 5),
      },
      goals: [],
      table: { columns: ['tenant', 'jobs', 'fair p50 ms', 'fair p99 ms', 'plain BullMQ p50 ms', 'plain BullMQ p99 ms'], rows },
      notes: [
        `The flood: ${floodJobs} one-image CNN jobs at normal priority from one key, queued before the worker ` +
          `starts (max batch 4, delay 2 ms, one worker, intraOpNumThreads 1: it drains for longer than the trickles run).`,
        `Trickles for ${trickleS} s from the moment the worker starts: ${TRICKLES.map((t) => `${t.ratePerS}/s ${t.priority}`).join(', ')}, ` +
          `one key each. Queue wait is queue_ms (submit to batch start), over the jobs submitted before the flood's last job ` +
          `started (the 'jobs' column).`,
        `Fair: FAIR_SCHEDULING on (the default) and PRIORITY_AGING_S=${AGING_S}. Plain: FAIR_SCHEDULING=false ` +
          `and no aging: BullMQ's strict priorities, first come first served within each.`,
      ],
    };
  },
};
