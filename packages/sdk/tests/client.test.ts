import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, demoModel, mlpRows, startStack, type Stack } from '@inferq/test-utils';
import { createClient, InferqError, isFinishedJob, outputArray, tensor, type FetchLike, type InferqClient } from '../src/index.ts';

// The SDK against the real API and a worker, as separate processes.

let stack: Stack;
let client: InferqClient;
let requests = 0;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
  await stack.startWorker();
  const counting: FetchLike = (input, init) => {
    requests++;
    return fetch(input, init);
  };
  client = createClient({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY, fetch: counting });
});
afterAll(async () => {
  await stack?.close();
});

const features = (seed: number) => tensor('features', mlpRows(1, seed), [1, 64]);

async function expectProblem(promise: Promise<unknown>, fields: Partial<InferqError>): Promise<InferqError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(InferqError);
  expect(err).toMatchObject(fields);
  return err as InferqError;
}

describe('jobs', () => {
  it('submits a typed-array tensor, waits for it, and reads the output back as the Float32Array the API returns', async () => {
    const input = features(1);
    expect(typeof input.data).toBe('string'); // 256 bytes: the base64 fast path
    const accepted = await client.jobs.submit({ model: 'mlp', inputs: [input] });
    expect(accepted.status).toBe('queued');
    const statuses: string[] = [];
    const job = await client.jobs.wait(accepted.id, { timeoutMs: 30_000, onStatus: (j) => statuses.push(j.status) });
    expect(job.status).toBe('succeeded');
    expect(statuses.at(-1)).toBe('succeeded');

    const logits = await client.jobs.readOutput(job, 'logits', 'FP32');
    expect(logits).toBeInstanceOf(Float32Array);
    expect(logits.length).toBe(16);
    const raw = await stack.request('GET', `/v1/jobs/${job.id}`);
    expect(Array.from(logits)).toEqual(raw.json.outputs[0].data);
    // The same values through the base64 encoding and through the raw tensor download.
    const b64 = await client.jobs.get(job.id, { encoding: 'base64' });
    expect(outputArray(b64.outputs![0]!, 'FP32')).toEqual(logits);
    const { data: _inline, ...urlOnly } = job.outputs![0]!;
    expect(await client.jobs.readOutput({ ...job, outputs: [urlOnly] }, 'logits', 'FP32')).toEqual(logits);
  });

  it('reads a finished job framed (Accept: application/octet-stream), its outputs decoded into typed arrays', async () => {
    const { id } = await client.jobs.submit({ model: 'mlp', inputs: [features(5)] }, { wait: 20 });
    const queuedOrDone = await client.jobs.wait(id, { timeoutMs: 30_000, binary: true });
    expect(queuedOrDone.status).toBe('succeeded');
    const json = await client.jobs.get(id);
    const framed = await client.jobs.get(id, { binary: true });
    const { outputs: _outputs, ...head } = json;
    expect(framed).toMatchObject(head);
    expect(framed.outputs).toEqual([{ name: 'logits', datatype: 'FP32', shape: [1, 16], bytes: 64, values: outputArray(json.outputs![0]!, 'FP32') }]);
    const raw = await fetch(`${stack.baseUrl}/v1/jobs/${id}`, { headers: { authorization: `Bearer ${ADMIN_KEY}`, accept: 'application/octet-stream' } });
    expect(raw.headers.get('content-type')).toMatch(/^application\/octet-stream/);
  });

  it('with wait, answers the finished job in one call', async () => {
    const result = await client.jobs.submit({ model: 'mlp', inputs: [features(2)] }, { wait: 20 });
    expect(isFinishedJob(result)).toBe(true);
    if (isFinishedJob(result)) expect(result.outputs?.[0]?.name).toBe('logits');
  });

  it('returns the same job for a repeated idempotency key, and refuses the key with another body', async () => {
    const key = `sdk-${Date.now()}`;
    const first = await client.jobs.submit({ model: 'mlp', inputs: [features(3)] }, { idempotencyKey: key });
    const again = await client.jobs.submit({ model: 'mlp', inputs: [features(3)] }, { idempotencyKey: key });
    expect(again.id).toBe(first.id);
    await expectProblem(client.jobs.submit({ model: 'mlp', inputs: [features(4)] }, { idempotencyKey: key }), { status: 409, code: 'IDEMPOTENCY_CONFLICT' });
  });

  it('lists every job across pages with for await', async () => {
    for (let i = 0; i < 3; i++) await client.jobs.submit({ model: 'mlp', inputs: [features(10 + i)] });
    const everything = await client.jobs.page({ limit: 500 });
    expect(everything.nextCursor).toBeNull();
    const before = requests;
    const ids: string[] = [];
    for await (const job of client.jobs.list({ model: 'mlp', limit: 2 })) ids.push(job.id);
    expect(ids).toEqual(everything.items.map((j) => j.id));
    expect(ids.length).toBeGreaterThanOrEqual(5);
    expect(requests - before).toBeGreaterThanOrEqual(Math.ceil(ids.length / 2));
  });

  it('throws InferqError with the problem for an invalid body', async () => {
    const err = await expectProblem(client.jobs.submit({ model: 'mlp', inputs: [] }), { status: 400, code: 'VALIDATION_FAILED' });
    expect(err.errors.length).toBeGreaterThan(0);
    expect(err.errors[0]!.pointer).toMatch(/inputs/);
    await expectProblem(client.jobs.submit({ model: 'mlp', inputs: [tensor('features', new Float32Array(10), [1, 10])] }), {
      status: 400,
      code: 'INPUT_SHAPE_MISMATCH',
    });
    await expectProblem(client.jobs.get('00000000-0000-4000-8000-000000000000'), { status: 404, code: 'JOB_NOT_FOUND' });
  });

  it('cancels only queued jobs and retries a finished one as a new job', async () => {
    const { id } = await client.jobs.submit({ model: 'mlp', inputs: [features(20)] }, { wait: 20 });
    await expectProblem(client.jobs.cancel(id), { status: 409, code: 'JOB_NOT_CANCELABLE' });
    const again = await client.jobs.retry(id);
    expect(again.id).not.toBe(id);
    expect((await client.jobs.wait(again.id, { timeoutMs: 30_000 })).status).toBe('succeeded');
  });
});

describe('binary tensors', () => {
  const rows = (n: number, seed: number) => ({ name: 'features', shape: [n, 64], data: mlpRows(n, seed) });
  const storedInput = async (id: string) =>
    new Float32Array(await (await fetch(`${stack.baseUrl}/v1/jobs/${id}/inputs/0`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).arrayBuffer());

  it('submits framed past the binary threshold; the job runs on the same bytes as a JSON submit', async () => {
    const seen: string[] = [];
    const framing = createClient({
      baseUrl: stack.baseUrl,
      apiKey: ADMIN_KEY,
      binaryThresholdBytes: 1024,
      fetch: (input, init) => {
        seen.push(new Headers(init?.headers).get('content-type') ?? '');
        return fetch(input, init);
      },
    });
    const framed = await framing.jobs.submit({ model: 'mlp', inputs: [rows(8, 50)] }, { wait: 20, binary: true });
    expect(seen[0]).toBe('application/octet-stream');
    expect(framed).toMatchObject({ status: 'succeeded' });
    const json = await client.jobs.submit({ model: 'mlp', inputs: [rows(8, 50)] }, { wait: 20, binaryThresholdBytes: Infinity });
    if (!isFinishedJob(json) || !('outputs' in framed)) throw new Error('not finished');
    expect(await storedInput(framed.id)).toEqual(mlpRows(8, 50));
    expect(framed.outputs![0]!.values).toEqual(await client.jobs.readOutput(json, 'logits', 'FP32'));
  });

  it('uploads an input past the upload threshold and names it by id', async () => {
    const paths: string[] = [];
    const uploading = createClient({
      baseUrl: stack.baseUrl,
      apiKey: ADMIN_KEY,
      uploadThresholdBytes: 1024,
      fetch: (input, init) => {
        paths.push(`${init?.method ?? 'GET'} ${new URL(input).pathname.split('/').slice(0, 3).join('/')}`);
        return fetch(input, init);
      },
    });
    const { id } = await uploading.jobs.submit({ model: 'mlp', inputs: [rows(8, 51)] });
    expect(paths[0]).toBe('POST /v1/uploads');
    expect(paths[1]).toMatch(/^PUT /);
    expect(paths[2]).toBe('POST /v1/jobs');
    expect((await client.jobs.wait(id, { timeoutMs: 30_000 })).status).toBe('succeeded');
    expect(await storedInput(id)).toEqual(mlpRows(8, 51));
  });
});

describe('retention', () => {
  it('deletes a finished job to a tombstone, refuses reads of it with 410 JOB_PURGED, and sets key and model retention', async () => {
    const { id } = await client.jobs.submit({ model: 'mlp', inputs: [features(40)], keepInputs: true }, { wait: 20 });
    expect((await client.jobs.get(id)).keepInputs).toBe(true);
    const tombstone = await client.jobs.delete(id);
    expect(tombstone).toMatchObject({ id, status: 'succeeded', purgeReason: 'deleted', metadata: {} });
    await expectProblem(client.jobs.get(id), { status: 410, code: 'JOB_PURGED' });
    expect((await client.jobs.page({ id })).items[0]).toMatchObject({ id, purgedAt: tombstone.purgedAt });

    const me = await client.me();
    expect((await client.keys.update(me.keyId, { retentionS: 3_600 })).retentionS).toBe(3_600);
    expect((await client.keys.update(me.keyId, { retentionS: null })).retentionS).toBeNull();
    expect(await client.models.setRetention('mlp', 600)).toMatchObject({ name: 'mlp', retentionS: 600 });
    expect((await client.models.get('mlp')).retention).toMatchObject({ retentionS: 600, effectiveS: 600, source: 'model' });
    expect(await client.models.setRetention('mlp', null)).toMatchObject({ name: 'mlp', retentionS: null });
    expect((await client.models.get('mlp')).retention).toMatchObject({ retentionS: null, source: 'default' });
    await expectProblem(client.models.setRetention('mlp', 10), { status: 400, code: 'VALIDATION_FAILED' });
  });
});

describe('models', () => {
  it('uploads bytes as the next version and gets the latest one', async () => {
    const file = new Uint8Array(await readFile(demoModel('mlp').path));
    const v1 = await client.models.upload({ name: 'sdk-mlp', file, maxBatchSize: 4, maxBatchDelayMs: 1 });
    expect(v1).toMatchObject({ name: 'sdk-mlp', version: 1, batching: { maxBatchSize: 4, maxBatchDelayMs: 1 } });
    const v2 = await client.models.upload({ name: 'sdk-mlp', file: new Blob([file]) });
    expect(v2.version).toBe(2);
    expect(await client.models.get('sdk-mlp')).toMatchObject({ version: 2, sha256: v1.sha256 });
    expect((await client.models.versions('sdk-mlp')).map((m) => m.version)).toEqual([2, 1]);
    await expectProblem(client.models.versions('no-such-model'), { status: 404, code: 'MODEL_NOT_FOUND' });
    expect((await client.models.list()).map((m) => m.name)).toEqual(expect.arrayContaining(['mlp', 'sdk-mlp']));
    await expectProblem(client.models.get('no-such-model'), { status: 404, code: 'MODEL_NOT_FOUND' });
    await expectProblem(client.models.upload({ name: 'broken', file: new Uint8Array([1, 2, 3]) }), { status: 422, code: 'MODEL_INVALID' });
  });

  it('splits traffic between versions, promotes one and removes routing', async () => {
    const file = new Uint8Array(await readFile(demoModel('mlp').path));
    await client.models.upload({ name: 'sdk-routed', file });
    await client.models.upload({ name: 'sdk-routed', file });
    expect(await client.models.getRouting('sdk-routed')).toMatchObject({ versions: [], updatedAt: null });
    const split = await client.models.setRouting('sdk-routed', [
      { version: 1, weight: 50 },
      { version: 2, weight: 50 },
    ]);
    expect(split.versions).toEqual([
      { version: 1, weight: 50 },
      { version: 2, weight: 50 },
    ]);
    expect(await client.models.getRouting('sdk-routed')).toEqual(split);
    expect((await client.models.get('sdk-routed')).routing).toEqual(split.versions);
    expect((await client.models.setRouting('sdk-routed', [{ version: 2, weight: 100 }])).versions).toEqual([{ version: 2, weight: 100 }]);
    expect(await client.models.setRouting('sdk-routed', [])).toMatchObject({ versions: [], updatedAt: null });
    const err = await expectProblem(client.models.setRouting('sdk-routed', [{ version: 3, weight: 1 }]), { status: 400, code: 'VALIDATION_FAILED' });
    expect(err.errors[0]?.pointer).toBe('/body/versions/0/version');
  });
});

describe('retiring versions', () => {
  it('retires a version: new jobs for it are refused, a routed one needs reroute, and the name alone moves on', async () => {
    const file = new Uint8Array(await readFile(demoModel('mlp').path));
    await client.models.upload({ name: 'sdk-retired', file });
    await client.models.upload({ name: 'sdk-retired', file });
    await client.models.setRouting('sdk-retired', [{ version: 2, weight: 1 }]);
    const retired = await client.models.retire('sdk-retired', 1);
    expect(retired).toMatchObject({ name: 'sdk-retired', versions: [{ version: 1, unfinishedJobs: 0 }], routing: [{ version: 2, weight: 1 }] });
    expect((await client.models.get('sdk-retired:1')).retiredAt).toBe(retired.versions[0]!.retiredAt);
    await expectProblem(client.jobs.submit({ model: 'sdk-retired:1', inputs: [features(50)] }), { status: 410, code: 'MODEL_VERSION_RETIRED' });
    await expectProblem(client.models.retire('sdk-retired', 2), { status: 409, code: 'MODEL_VERSION_ROUTED' });
    expect(await client.models.retire('sdk-retired', undefined, { reroute: true })).toMatchObject({
      versions: [{ version: 2 }, { version: 1 }],
      routing: [],
    });
    await expectProblem(client.jobs.submit({ model: 'sdk-retired', inputs: [features(51)] }), { status: 410, code: 'MODEL_VERSION_RETIRED' });
    await expectProblem(client.models.retire('sdk-retired', 9), { status: 404, code: 'MODEL_NOT_FOUND' });
  });
});

describe('model queues', () => {
  it('pauses a model: a job is accepted and stays queued; resume runs it; a non-admin key is refused', async () => {
    const paused = await client.models.pause('mlp');
    expect(paused).toMatchObject({ model: 'mlp', paused: true });
    expect((await client.models.pause('mlp')).paused).toBe(true);
    const accepted = await client.jobs.submit({ model: 'mlp', inputs: [features(40)] });
    expect((await client.stats()).queues.find((q) => q.model === 'mlp')).toMatchObject({ paused: true, normal: 1 });
    expect((await client.jobs.get(accepted.id)).status).toBe('queued');
    const writer = await client.keys.create({ name: 'sdk-models-writer', scopes: ['models:write'] });
    await expectProblem(createClient({ baseUrl: stack.baseUrl, apiKey: writer.secret }).models.resume('mlp'), { status: 403, code: 'FORBIDDEN' });
    await expectProblem(client.models.pause('absent'), { status: 404, code: 'MODEL_NOT_FOUND' });
    expect(await client.models.resume('mlp')).toMatchObject({ model: 'mlp', paused: false });
    expect((await client.jobs.wait(accepted.id, { timeoutMs: 30_000 })).status).toBe('succeeded');
  });
});

describe('keys and system', () => {
  it('creates a key that works until it is revoked', async () => {
    const created = await client.keys.create({ name: 'sdk-test', scopes: ['jobs:read'], weight: 3 });
    expect(created.secret).toMatch(/^iq_/);
    expect(created.weight).toBe(3);
    const reader = createClient({ baseUrl: stack.baseUrl, apiKey: created.secret });
    expect(await reader.me()).toMatchObject({ keyId: created.id, scopes: ['jobs:read'], admin: false, weight: 3 });
    await expectProblem(reader.jobs.submit({ model: 'mlp', inputs: [features(30)] }), { status: 403, code: 'FORBIDDEN' });
    expect((await client.keys.list()).some((k) => k.id === created.id)).toBe(true);
    const revoked = await client.keys.revoke(created.id);
    expect(revoked.revokedAt).not.toBeNull();
    await expectProblem(reader.me(), { status: 401, code: 'UNAUTHENTICATED' });
  });

  it('reads stats and workers', async () => {
    expect((await client.workers()).length).toBeGreaterThanOrEqual(1);
    const stats = await client.stats({ windowMinutes: 5 });
    expect(stats).toMatchObject({ windowMinutes: 5, scope: 'all' });
    expect(stats.workersOnline).toBeGreaterThanOrEqual(1);
  });

  it('reports an unreachable API as NETWORK_ERROR', async () => {
    const nowhere = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: ADMIN_KEY });
    await expectProblem(nowhere.models.list(), { status: 0, code: 'NETWORK_ERROR' });
  });
});
