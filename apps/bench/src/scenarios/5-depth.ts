import { randomUUID } from 'node:crypto';
import { batchShapeKey, type StoredTensor } from '@inferq/contracts';
import { listJobPartitions, type Pool } from '@inferq/db';
import { createJobProducer, createRedisConnection, deleteKeysWithPrefix, queueKeyStem, type JobProducer, type RedisClient } from '@inferq/queue';
import { ADMIN_KEY, mlpRows, type Stack } from '@inferq/test-utils';
import { mlpJobBody } from '../driver.ts';
import { runLoad, type LoadResult } from '../load/autocannon.ts';
import { goal, type Scenario } from '../scenario.ts';
import { median, round } from '../stats.ts';

const CONNECTIONS = 100;
const ENQUEUE_CHUNK = 1_000;
// Inline tensors as rows keep them (migration 0022): the header in jsonb with the bytes' offset, the bytes in input_data / output_data.
const INPUT: StoredTensor = { name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256, at: 0 };
const OUTPUT: StoredTensor = { name: 'logits', datatype: 'FP32', shape: [1, 16], bytes: 64, at: 0 };
const bytesOf = (values: Float32Array) => Buffer.from(values.buffer, values.byteOffset, values.byteLength);

/** `rows` finished MLP jobs as the worker leaves them (inline input and output, timings, batches of 64), in one statement. */
async function fillJobsTable(pool: Pool, rows: number): Promise<void> {
  await pool.query(
    `INSERT INTO jobs (id, owner_key_id, model_name, model_version, priority, status, inputs, outputs, input_data, output_data, attempts, worker_id,
                       batch_id, batch_size, created_at, started_at, finished_at, queue_ms, infer_ms)
     SELECT (substr(c.h, 1, 8) || '-' || substr(c.h, 9, 4) || substr(gen_random_uuid()::text, 14))::uuid,
            k.id, 'mlp', 1, (ARRAY['high', 'normal', 'low'])[1 + g % 3], 'succeeded', $2::jsonb, $3::jsonb, $4::bytea, $5::bytea, 1, 'bench',
            md5((g / 64)::text)::uuid, 64, t, t + interval '3 ms', t + interval '5 ms', 3, 1.5
       FROM generate_series(1, $1::int) AS g,
            (SELECT id FROM api_keys LIMIT 1) AS k,
            -- UUIDv7-shaped ids of time t: jobs is partitioned by id as a time range (migration 0018).
            LATERAL (SELECT now() - g * interval '500 ms' AS t) AS ct,
            LATERAL (SELECT lpad(to_hex((extract(epoch FROM ct.t) * 1000)::bigint), 12, '0') AS h) AS c`,
    [rows, JSON.stringify([INPUT]), JSON.stringify([OUTPUT]), bytesOf(mlpRows(1, 1)), bytesOf(new Float32Array(16).fill(0.5))],
  );
  // Otherwise autovacuum wakes up for the new rows in the middle of the measurements.
  await pool.query('VACUUM ANALYZE jobs');
  // The submit runs add rows; an autovacuum waking in one measurement and not
  // another would be read as a depth effect.
  // Storage parameters belong to each partition of jobs (migration 0018), not to the partitioned parent.
  for (const { name } of await listJobPartitions(pool)) await pool.query(`ALTER TABLE "${name}" SET (autovacuum_enabled = false)`);
}

/** One API key, as if one client queued them all. */
const BENCH_TENANT = '0190a1b2-3e4f-7a5b-9c6d-7e8f9a0b1c2d';

/** Adds `count` queue jobs carrying the payload the API enqueues, through inferq's producer (their rows are not needed: no worker runs). */
async function enqueueJobs(producer: JobProducer, count: number): Promise<void> {
  for (let i = 0; i < count; i += ENQUEUE_CHUNK) {
    await producer.enqueueJobs(
      Array.from({ length: Math.min(ENQUEUE_CHUNK, count - i) }, () => ({
        priority: 'normal' as const,
        jobId: randomUUID(),
        model: 'mlp',
        tenant: BENCH_TENANT,
        payload: { modelVersion: 1, batchKey: batchShapeKey([INPUT]), priority: 'normal' },
      })),
    );
  }
}

const usedMemoryBytes = async (redis: RedisClient): Promise<number> => Number(/used_memory:(\d+)/.exec(await redis.info('memory'))![1]);

interface DepthRun {
  get: LoadResult;
  submit: LoadResult;
  /** Redis used_memory growth during the submit run ÷ the queue jobs it added. */
  redisBytesPerJob: number;
}

/** Medians over the rounds: one 5-second run on a shared 2-core box swings by a fifth. */
interface DepthFigures {
  submitReqPerS: number;
  submitP99Ms: number;
  getReqPerS: number;
  getP99Ms: number;
  redisBytesPerJob: number;
}

const medians = (runs: DepthRun[]): DepthFigures => ({
  submitReqPerS: median(runs.map((r) => r.submit.reqPerS)),
  submitP99Ms: median(runs.map((r) => r.submit.p99Ms!)),
  getReqPerS: median(runs.map((r) => r.get.reqPerS)),
  getP99Ms: median(runs.map((r) => r.get.p99Ms!)),
  redisBytesPerJob: median(runs.map((r) => r.redisBytesPerJob)),
});

/** GET on one finished job, then submits, each under autocannon; the submits deepen the queue. */
async function measureAtDepth(stack: Stack, producer: JobProducer, redis: RedisClient, jobId: string, durationS: number): Promise<DepthRun> {
  const headers = { authorization: `Bearer ${ADMIN_KEY}` };
  const get = await runLoad({ url: `${stack.baseUrl}/v1/jobs/${jobId}`, headers, connections: CONNECTIONS, durationS });
  const [memoryBefore, depthBefore] = await Promise.all([usedMemoryBytes(redis), producer.backlog('mlp')]);
  const submit = await runLoad({
    url: `${stack.baseUrl}/v1/jobs`,
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(mlpJobBody('normal')),
    connections: CONNECTIONS,
    durationS,
  });
  const [memoryAfter, depthAfter] = await Promise.all([usedMemoryBytes(redis), producer.backlog('mlp')]);
  return { get, submit, redisBytesPerJob: (memoryAfter - memoryBefore) / (depthAfter - depthBefore) };
}

export const depth: Scenario = {
  id: '5',
  title: 'Depth: submit throughput, GET latency and Redis memory with an empty and a deep queue',
  async run(ctx) {
    const rows = ctx.size(1_000_000, 1_000);
    const deepQueue = ctx.size(200_000, 500);
    const durationS = ctx.size(5, 1);
    const rounds = ctx.size(3, 1);
    const stack = await ctx.startStack();
    const redis = createRedisConnection(stack.ctx.env.REDIS_URL!, 'consumer');
    const producer = createJobProducer({ connection: redis, prefix: stack.ctx.prefix });
    try {
      await stack.registerModel('mlp');
      await redis.ping();
      let started = performance.now();
      await fillJobsTable(stack.ctx.pool, rows);
      const fillS = (performance.now() - started) / 1000;
      ctx.log(`  ${rows} finished jobs inserted and vacuumed in ${fillS.toFixed(1)} s`);
      const {
        rows: [target],
      } = await stack.ctx.pool.query('SELECT id FROM jobs LIMIT 1');

      // The queue's keys and all of ours beside it (carried inputs, fair finishes) go: each run starts from nothing.
      const clearQueue = () => deleteKeysWithPrefix(redis, queueKeyStem(stack.ctx.prefix, 'mlp'));
      const measure = () => measureAtDepth(stack, producer, redis, target.id, durationS);
      await measureAtDepth(stack, producer, redis, target.id, ctx.size(1, 0.5)); // warm-up: JIT, pools, caches
      // Empty and deep alternate, so what drifts during the run (autovacuum on
      // the growing table, other users of the box) weighs on both alike.
      const emptyRuns: DepthRun[] = [];
      const deepRuns: DepthRun[] = [];
      const bulk: Array<{ jobsPerS: number; bytesPerJob: number }> = [];
      const measureEmpty = async () => {
        await clearQueue();
        emptyRuns.push(await measure());
      };
      const measureDeep = async () => {
        await clearQueue();
        const memoryBefore = await usedMemoryBytes(redis);
        started = performance.now();
        await enqueueJobs(producer, deepQueue);
        bulk.push({ jobsPerS: deepQueue / ((performance.now() - started) / 1000), bytesPerJob: ((await usedMemoryBytes(redis)) - memoryBefore) / deepQueue });
        deepRuns.push(await measure());
      };
      // The order flips every round: the table grows with each submit run, and neither depth may always come second.
      for (let i = 0; i < rounds; i++) {
        const order = i % 2 === 0 ? [measureEmpty, measureDeep] : [measureDeep, measureEmpty];
        for (const step of order) await step();
      }
      const empty = medians(emptyRuns);
      const deep = medians(deepRuns);
      const enqueueJobsPerS = median(bulk.map((b) => b.jobsPerS));
      const bulkBytesPerJob = median(bulk.map((b) => b.bytesPerJob));

      const submitRatio = deep.submitReqPerS / empty.submitReqPerS;
      const getP99Ratio = deep.getP99Ms / empty.getP99Ms;
      return {
        id: '5',
        title: this.title,
        metrics: {
          jobs_table_rows: rows,
          fill_s: round(fillS, 1),
          deep_queue_jobs: deepQueue,
          enqueue_jobs_per_s: round(enqueueJobsPerS, 0),
          rounds,
          submit_req_per_s_empty: round(empty.submitReqPerS, 0),
          submit_req_per_s_deep: round(deep.submitReqPerS, 0),
          submit_deep_to_empty_ratio: round(submitRatio, 3),
          submit_p99_ms_empty: round(empty.submitP99Ms, 1),
          submit_p99_ms_deep: round(deep.submitP99Ms, 1),
          get_req_per_s_empty: round(empty.getReqPerS, 0),
          get_req_per_s_deep: round(deep.getReqPerS, 0),
          get_p99_ms_empty: round(empty.getP99Ms, 1),
          get_p99_ms_deep: round(deep.getP99Ms, 1),
          get_p99_deep_to_empty_ratio: round(getP99Ratio, 3),
          redis_bytes_per_job_bulk: round(bulkBytesPerJob, 0),
          redis_bytes_per_job_submit_empty: round(empty.redisBytesPerJob, 0),
          redis_bytes_per_job_submit_deep: round(deep.redisBytesPerJob, 0),
        },
        goals: [
          goal('submit req/s, deep ÷ empty queue', round(submitRatio, 3), '>=', 0.9),
          goal('GET /v1/jobs/:id p99, deep ÷ empty queue', round(getP99Ratio, 3), '<=', 1.1),
          goal('Redis bytes per queued job (small inline input)', round(bulkBytesPerJob, 0), '<=', 1024, 'bytes'),
        ],
        notes: [
          `The jobs table holds ${rows} finished MLP jobs (one INSERT … SELECT FROM generate_series, then ` +
            `VACUUM ANALYZE and autovacuum off for the table); no worker runs, so every submit stays queued.`,
          `${rounds} rounds, each measuring the empty and the deep queue, in alternating order: autocannon ` +
            `(${CONNECTIONS} connections, ${durationS} s) on GET /v1/jobs/:id of one finished job, then on POST ` +
            `/v1/jobs (one MLP job, base64 [1, 64] FP32, priority normal); after a warm-up of both. Figures are ` +
            `medians over the rounds.`,
          `Empty: the queue emptied first, so it grows from 0 during the submit run. Deep: emptied, then ` +
            `${deepQueue} queue jobs of the API's payload added through inferq's producer (addBulk of ${ENQUEUE_CHUNK}).`,
          'Redis bytes per job: used_memory growth ÷ queue jobs added (INFO memory), over the bulk add and over ' +
            'each submit run. Other users of the same Redis add noise to the latter.',
        ],
      };
    } finally {
      await producer.close();
      redis.disconnect();
      await stack.close();
    }
  },
};
