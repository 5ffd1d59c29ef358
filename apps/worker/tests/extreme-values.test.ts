// Hostile input, the worker's half (reliability promise 5): jobs that pass the
// API's validation but carry extreme values — NaN and infinities as raw bits,
// denormals, ±max floats, int64 extremes, ids outside the vocabulary, empty and
// odd dims — for every demo model. Each must end succeeded or failed with a
// stored error code, and the worker must live on and serve a normal job.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isErrorCode } from '@inferq/contracts';
import { mlpJob, runLimited, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

/** FUZZ_RUNS scales the job count, FUZZ_SEED replays a run (as in apps/api/tests/fuzz.test.ts). */
const JOBS = Math.max(1, Math.round(40 * Number(process.env.FUZZ_RUNS ?? 1)));
const SEED = process.env.FUZZ_SEED === undefined ? Date.now() % 2 ** 31 : Number(process.env.FUZZ_SEED);

const base64 = (typed: Float32Array | BigInt64Array) => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength).toString('base64');

/** FP32 bit patterns JSON cannot carry (NaNs, infinities) beside the extremes it can. */
const fp32Bits = fc.constantFrom(
  0x7fc00000,
  0xffc00000,
  0x7f800001,
  0x7fbfffff, // quiet, negative, signalling NaNs
  0x7f800000,
  0xff800000, // ±Infinity
  0x00000001,
  0x807fffff,
  0x00800000, // denormals, smallest normal
  0x7f7fffff,
  0xff7fffff,
  0x80000000,
  0x00000000,
  0x3f800000, // ±max, -0, 0, 1
);
const fp32Tensor = (count: number) => fc.array(fp32Bits, { minLength: count, maxLength: count }).map((bits) => new Float32Array(Uint32Array.from(bits).buffer));

/** INT64 ids around and beyond the transformer's vocabulary (1000) and the int64 range ends. */
const int64Value = fc.constantFrom(0n, 1n, 999n, 1000n, -1n, -1000n, -1001n, 2n ** 31n, 2n ** 63n - 1n, -(2n ** 63n));

type Job = { what: string; body: object };

const mlp = fc.integer({ min: 1, max: 4 }).chain((rows) =>
  fp32Tensor(rows * 64).map((x): Job => ({
    what: `mlp ${rows} rows`,
    body: { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], data: base64(x) }] },
  })),
);
const cnn = fp32Tensor(3 * 32 * 32).map((x): Job => ({
  what: 'cnn',
  body: { model: 'cnn', inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: base64(x) }] },
}));
const transformer = fc.record({ seq: fc.constantFrom(0, 1, 5, 128, 129, 300), ids: int64Value, mask: int64Value }).map(({ seq, ids, mask }): Job => {
  const tensor = (name: string, v: bigint) => ({
    name,
    datatype: 'INT64',
    shape: [1, seq],
    data: base64(BigInt64Array.from({ length: seq }, (_, i) => (i % 2 ? v : BigInt(i % 1000)))),
  });
  return {
    what: `transformer seq ${seq} ids ${ids} mask ${mask}`,
    body: { model: 'transformer', inputs: [tensor('input_ids', ids), tensor('attention_mask', mask)] },
  };
});
/** Spatial dims of zero, one and not multiples of the model's stride of 32. */
const ocr = fc.constantFrom([0, 0], [0, 32], [1, 1], [3, 5], [32, 32], [33, 64]).chain(([h, w]) =>
  fp32Tensor(3 * h! * w!).map((x): Job => ({
    what: `ocr-det ${h}x${w}`,
    body: { model: 'ocr-det', inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 3, h, w], data: base64(x) }] },
  })),
);

let stack: Stack;
let worker: TestProcess;

beforeAll(async () => {
  stack = await startStack({ logLevel: 'warn' });
  for (const model of ['mlp', 'cnn', 'transformer', 'ocr-det']) await stack.registerModel(model);
  worker = await stack.startWorker();
});
afterAll(() => stack?.close());

describe('jobs with extreme values that pass validation', () => {
  it('end succeeded or failed with a stored code, and leave the worker alive', async () => {
    console.log(`extreme values: seed ${SEED} (replay with FUZZ_SEED=${SEED})`);
    const jobs = fc.sample(fc.oneof(mlp, cnn, transformer, ocr), { numRuns: JOBS, seed: SEED });
    const ids = await runLimited(jobs.length, 8, async (i) => {
      const res = await stack.request('POST', '/v1/jobs', jobs[i]!.body);
      expect(res.status, `${jobs[i]!.what}: ${JSON.stringify(res.json)}`).toBe(202);
      return res.json.id as string;
    });
    const finished = await waitFor(
      async () => {
        const { rows } = await stack.ctx.pool.query(
          "SELECT id, status, error_code FROM jobs WHERE id = ANY($1::uuid[]) AND status IN ('succeeded', 'failed')",
          [ids],
        );
        return rows.length === ids.length ? rows : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 200, what: 'every job to finish' },
    );
    const outcomes = new Map<string, number>();
    for (const row of finished) {
      const model = (jobs[ids.indexOf(row.id)]!.body as { model: string }).model;
      const outcome = `${model} ${row.status === 'failed' ? `failed ${row.error_code}` : 'succeeded'}`;
      outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      // A classified failure: INTERNAL would mean the worker met an error it does not understand.
      if (row.status === 'failed') expect(isErrorCode(row.error_code) && row.error_code !== 'INTERNAL', `job ${row.id} stored ${row.error_code}`).toBe(true);
    }
    console.log(
      `extreme values: ${ids.length} jobs: ${[...outcomes]
        .sort()
        .map(([k, n]) => `${k} ${n}`)
        .join(', ')}`,
    );
    // Every job reads back, NaN and Infinity outputs included, in both encodings.
    for (const id of ids) {
      for (const encoding of ['json', 'base64']) expect((await stack.request('GET', `/v1/jobs/${id}?encoding=${encoding}`)).status).toBe(200);
    }

    // The same process still runs, still beats, and still serves a normal job.
    expect(worker.child.exitCode).toBeNull();
    expect((await stack.request('GET', '/v1/workers')).json.items.map((w: { pid: number }) => w.pid)).toEqual([worker.child.pid]);
    const normal = await stack.request('POST', '/v1/jobs', mlpJob(1));
    await waitFor(async () => (await stack.request('GET', `/v1/jobs/${normal.json.id}`)).json.status === 'succeeded', {
      what: 'a normal job after the extreme ones',
    });
  });
});
