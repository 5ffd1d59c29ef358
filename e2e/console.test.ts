import * as ort from 'onnxruntime-node';
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, demoModel, waitFor } from '@inferq/test-utils';
import { writeNpy } from '@inferq/sdk';
import { screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// The console against the real stack: the API serving the built console, one
// CPU worker for `mlp` only (so `cnn` jobs stay queued and can be canceled),
// Redis, Postgres and S3, driven in headless Chromium.

const suite = useConsoleSuite(async (stack) => {
  await stack.registerModel('mlp');
  await stack.registerModel('cnn');
  await stack.startWorker({ WORKER_MODELS: 'mlp' });
});

describe('the web console', () => {
  it('refuses a bad key with a clear message', async () => {
    await suite.page.goto(suite.stack.baseUrl);
    await suite.page.getByLabel('API key').fill('iq_notarealkey0_notarealsecret0000');
    await suite.page.getByRole('button', { name: 'Sign in' }).click();
    await suite.page
      .getByRole('alert')
      .filter({ hasText: /not valid|revoked/i })
      .waitFor();
    await screenshot(suite.page, 'sign-in-error');
  });

  it('signs in and shows the overview', async () => {
    await suite.page.getByLabel('API key').fill(ADMIN_KEY);
    await suite.page.getByRole('button', { name: 'Sign in' }).click();
    await suite.heading('Overview').waitFor();
  });

  let jobId = '';
  it('submits a job in the playground and shows the right output', async () => {
    await suite.openPage('Playground');
    await suite.page.getByRole('combobox', { name: 'Model' }).selectOption('mlp');
    await suite.page.getByRole('button', { name: 'Random' }).click();
    await suite.page.getByRole('button', { name: 'Submit', exact: true }).click();
    await suite.page
      .getByRole('status')
      .filter({ hasText: /succeeded/i })
      .waitFor();
    jobId = await waitFor(
      async () => {
        const { json } = await suite.stack.request('GET', '/v1/jobs?limit=1');
        return json.items[0]?.status === 'succeeded' ? (json.items[0].id as string) : undefined;
      },
      { what: 'the playground job to be stored' },
    );
    // The job's output is what onnxruntime computes for the input the console sent.
    const input = await fetch(`${suite.stack.baseUrl}/v1/jobs/${jobId}/inputs/0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const x = new Float32Array(await input.arrayBuffer());
    const session = await ort.InferenceSession.create(demoModel('mlp').path);
    const expected = (await session.run({ features: new ort.Tensor('float32', x, [x.length / 64, 64]) })).logits!.data as Float32Array;
    await session.release();
    const job = (await suite.stack.request('GET', `/v1/jobs/${jobId}`)).json;
    const got: number[] = job.outputs[0].data;
    expect(Math.max(...got.map((v, i) => Math.abs(v - expected[i]!)))).toBeLessThanOrEqual(1e-5);
    await suite.page.getByText('logits').first().waitFor();
    await screenshot(suite.page, 'playground');
  });

  it('lists the job in the jobs table and opens its detail', async () => {
    await suite.openPage('Jobs');
    const row = suite.page.getByRole('row').filter({ hasText: jobId.slice(0, 8) });
    await row.waitFor();
    await screenshot(suite.page, 'jobs');
    await row.getByRole('link').first().click();
    await suite.page.getByText('logits').first().waitFor();
    await screenshot(suite.page, 'job-detail');
  });

  it('submits a .npy file for an input in the playground, sent binary', async () => {
    const rows = Float32Array.from({ length: 16 * 64 }, (_, i) => ((i % 97) - 48) / 50);
    await suite.openPage('Playground');
    await suite.page.getByRole('combobox', { name: 'Model' }).selectOption('mlp');
    const npy = writeNpy({ datatype: 'FP32', shape: [16, 64], bytes: new Uint8Array(rows.buffer) });
    await suite.page
      .getByLabel('features file', { exact: true })
      .setInputFiles({ name: 'rows.npy', mimeType: 'application/octet-stream', buffer: Buffer.from(npy) });
    await suite.page.getByText('FP32 [16, 64]').waitFor();
    await suite.page.getByRole('button', { name: 'Submit', exact: true }).click();
    await suite.page
      .getByRole('status')
      .filter({ hasText: /succeeded/i })
      .waitFor();
    const { json } = await suite.stack.request('GET', '/v1/jobs?limit=1');
    const input = await fetch(`${suite.stack.baseUrl}/v1/jobs/${json.items[0].id}/inputs/0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    expect(new Float32Array(await input.arrayBuffer())).toEqual(rows);
    await suite.page.getByRole('button', { name: 'Use typed values' }).click();
  });

  it('cancels a queued job', async () => {
    const image = Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.sin(i));
    const { json } = await suite.stack.request('POST', '/v1/jobs', {
      model: 'cnn',
      inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image }],
    });
    await suite.page.goto(`${suite.stack.baseUrl}/jobs/${json.id}`);
    await suite.page.getByRole('button', { name: 'Cancel job' }).click();
    await suite.page
      .getByRole('status')
      .filter({ hasText: /canceled/i })
      .waitFor();
    expect((await suite.stack.request('GET', `/v1/jobs/${json.id}`)).json.status).toBe('canceled');
  });

  it('uploads a model with its tokenizer, and shows why a bad file is refused', async () => {
    await suite.openPage('Models');
    await suite.page.getByLabel('Model name').fill('broken');
    await suite.page
      .getByLabel('ONNX file')
      .setInputFiles({ name: 'broken.onnx', mimeType: 'application/octet-stream', buffer: Buffer.from('not an onnx model') });
    await suite.page.getByRole('button', { name: 'Upload' }).click();
    await suite.page.getByRole('alert').filter({ hasText: /onnx/i }).waitFor();
    await suite.page.getByLabel('Model name').fill('transformer');
    await suite.page.getByLabel('ONNX file').setInputFiles(demoModel('transformer').path);
    // The demo encoder with its tokenizer serves embeddings; the settings appear once a tokenizer is chosen.
    await suite.page.getByLabel('Tokenizer (tokenizer.json)').setInputFiles(demoModel('transformer').tokenizerPath!);
    await suite.page.getByLabel('Pooling').selectOption('cls');
    await suite.page.getByLabel('Max tokens').fill('64');
    await suite.page.getByRole('button', { name: 'Upload' }).click();
    await suite.page.getByRole('heading', { name: 'transformer' }).getByText('embeddings', { exact: true }).waitFor();
    const { status, json } = await suite.stack.request('GET', '/v1/models/transformer');
    expect(status).toBe(200);
    expect(json.embedding).toMatchObject({ pooling: 'cls', normalize: true, maxTokens: 64 });
    await screenshot(suite.page, 'models');
  });

  it('shows the worker with its device and loaded model', async () => {
    await suite.openPage('Workers');
    await suite.page.getByText('cpu', { exact: true }).first().waitFor();
    await suite.page.getByText(/mlp/).first().waitFor();
    await screenshot(suite.page, 'workers');
  });

  it('moves the overview numbers after a burst of jobs', async () => {
    await suite.openPage('Playground');
    await suite.page.getByRole('combobox', { name: 'Model' }).selectOption('mlp');
    await suite.page.getByRole('button', { name: 'Submit 100' }).click();
    await waitFor(
      async () => {
        const { json } = await suite.stack.request('GET', '/v1/jobs?status=succeeded&limit=101');
        return json.items.length >= 101;
      },
      { timeoutMs: 60_000, what: 'the burst to finish' },
    );
    await suite.openPage('Overview');
    const stats = (await suite.stack.request('GET', '/v1/stats')).json;
    expect(stats.completedPerSec).toBeGreaterThan(0);
    await suite.page
      .getByText(/workers online/i)
      .first()
      .waitFor();
    // The burst shows up per model version, next to the queue table.
    const versions = suite.page.getByRole('table', { name: 'Finished jobs per model version' });
    await versions.getByRole('cell', { name: 'mlp:1' }).waitFor();
    await screenshot(suite.page, 'overview');
  });

  it('creates an API key and shows its secret once', async () => {
    await suite.openPage('API keys');
    await suite.page.getByLabel('Key name').fill('e2e key');
    await suite.page.getByRole('button', { name: 'Create key' }).click();
    await suite.page
      .getByText(/^iq_[A-Za-z0-9]{12}_/)
      .first()
      .waitFor();
    await screenshot(suite.page, 'api-keys');
  });

  it('opens a model page and splits its traffic 50/50 between two versions', async () => {
    await suite.stack.registerModel('mlp'); // v2, the canary
    await suite.openPage('Models');
    await suite.page.getByRole('link', { name: 'mlp', exact: true }).click();
    await suite.heading('mlp').waitFor();
    await suite.page.getByRole('table', { name: 'Registered versions' }).getByRole('cell', { name: /^v2/ }).waitFor();
    // The burst above, as this model's per-version figures.
    await suite.page.getByRole('table', { name: 'Finished jobs per model version' }).getByRole('cell', { name: 'mlp:1' }).waitFor();
    await suite.page.getByRole('table', { name: 'Workers with mlp loaded' }).getByRole('cell', { name: 'v1', exact: true }).waitFor();

    await suite.page.getByLabel('Weight of v1').fill('50');
    await suite.page.getByLabel('Weight of v2').fill('50');
    await suite.page.getByRole('button', { name: 'Save routing' }).click();
    await suite.page.getByRole('status').filter({ hasText: 'Routing saved' }).waitFor();
    expect(await suite.page.getByLabel('Share of v2').textContent()).toBe('50.0%');
    expect((await suite.stack.request('GET', '/v1/models/mlp/routing')).json.versions).toEqual([
      { version: 1, weight: 50 },
      { version: 2, weight: 50 },
    ]);
    await screenshot(suite.page, 'model-detail');
  });
});
