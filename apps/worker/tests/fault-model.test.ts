import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modelArtifactKey } from '@inferq/storage';
import { ADMIN_KEY, installCompletionLog, mlpJob, settleLoad, startStack, startSteadyLoad, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// Two broken models beside a healthy one, all served by one worker under a
// steady load: `cnn-mismatch`, whose artifact in S3 no longer matches its
// sha256, and `cnn-corrupt`, whose artifact matches its recorded sha256 but is
// not a loadable model (a truncated file). Promise: their jobs fail with a
// clear stored error; the MLP's jobs keep succeeding in the same worker.

let stack: Stack;
let worker: TestProcess;
beforeAll(async () => {
  stack = await startStack();
  await installCompletionLog(stack.ctx.pool);
  await stack.registerModel('mlp');
  await stack.registerModel('cnn-mismatch', {}, 'cnn');
  await stack.registerModel('cnn-corrupt', {}, 'cnn');
  await corruptArtifacts();
  worker = await stack.startWorker();
});
afterAll(() => stack?.close());

async function artifactOf(name: string): Promise<{ key: string; bytes: Uint8Array }> {
  const {
    rows: [m],
  } = await stack.ctx.pool.query('SELECT artifact_key FROM models WHERE name = $1', [name]);
  return { key: m.artifact_key, bytes: await stack.ctx.storage.getObject(m.artifact_key) };
}

async function corruptArtifacts(): Promise<void> {
  // Bytes flipped in place: the download fails its sha256 check.
  const mismatch = await artifactOf('cnn-mismatch');
  const flipped = Uint8Array.from(mismatch.bytes, (b, i) => (i % 1000 === 0 ? b ^ 0xff : b));
  await stack.ctx.storage.putObject(mismatch.key, flipped);
  // Half a model, recorded with its own sha256: it passes the check and fails to load.
  const corrupt = (await artifactOf('cnn-corrupt')).bytes.slice(0, 60_000);
  const sha256 = createHash('sha256').update(corrupt).digest('hex');
  const key = modelArtifactKey('cnn-corrupt', sha256);
  await stack.ctx.storage.putObject(key, corrupt);
  await stack.ctx.pool.query('UPDATE models SET artifact_key = $1, sha256 = $2, size_bytes = $3 WHERE name = $4', [
    key,
    sha256,
    corrupt.byteLength,
    'cnn-corrupt',
  ]);
}

const image = (seed: number) => Buffer.from(Float32Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(seed * 3.1 + i * 0.37)).buffer).toString('base64');
/** Every fifth submission goes to each broken model, the rest to the MLP. */
const mixedJob = (i: number) => {
  const broken = ['cnn-mismatch', 'cnn-corrupt'][i % 5];
  return broken ? { model: broken, inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image(i) }] } : mlpJob(i);
};

describe('models with a corrupt artifact under load', () => {
  it('fail their own jobs with a stored error; the healthy model keeps serving in the same worker', async () => {
    const load = startSteadyLoad(stack, { ratePerS: 25, body: mixedJob, authorization: `Bearer ${ADMIN_KEY}` });
    await waitFor(
      async () =>
        (await stack.ctx.pool.query("SELECT count(DISTINCT model_name)::int AS n FROM jobs WHERE status = 'failed'")).rows[0].n === 2 &&
        load.accepted.length >= 100,
      { timeoutMs: 30_000, what: 'jobs of both broken models to fail' },
    );
    const { result, report } = await settleLoad(stack.ctx.pool, load, 'corrupt model artifacts');
    expect(result.violations).toEqual([]);
    expect(report).toMatchObject({ lost: 0, duplicated: 0 });

    const { rows } = await stack.ctx.pool.query(
      `SELECT model_name, status, error_code, min(error_message) AS message, count(*)::int AS n FROM jobs
        WHERE id = ANY($1::uuid[]) GROUP BY 1, 2, 3 ORDER BY 1`,
      [result.accepted],
    );
    console.log(rows.map((r) => `${r.model_name}: ${r.n} ${r.status}${r.error_code ? ` ${r.error_code} "${r.message}"` : ''}`).join('\n'));
    expect(rows.map(({ model_name, status, error_code }) => ({ model_name, status, error_code }))).toEqual([
      { model_name: 'cnn-corrupt', status: 'failed', error_code: 'MODEL_LOAD_FAILED' },
      { model_name: 'cnn-mismatch', status: 'failed', error_code: 'MODEL_ARTIFACT_INVALID' },
      { model_name: 'mlp', status: 'succeeded', error_code: null },
    ]);
    expect(rows.find((r) => r.model_name === 'cnn-mismatch').message).toMatch(/sha256/);
    expect(report.completed + report.failed).toBe(report.accepted);
    // One worker process served all three the whole time.
    expect(worker.child.exitCode).toBeNull();
    expect(new Set((await stack.ctx.pool.query('SELECT DISTINCT worker_id FROM jobs')).rows.map((r) => r.worker_id)).size).toBe(1);
  });
});
