import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, demoModel, mlpJob, mlpRows, startStack, type Stack } from '@inferq/test-utils';
import { readNpy, writeNpy } from '../src/index.ts';
import { runCli, type CliRun } from './run-cli.ts';

// The `inferq` CLI as a real process against the real API and a worker.

let stack: Stack;
let dir: string;

function inferq(...args: string[]): Promise<CliRun> {
  return runCli({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY }, args);
}

async function inferqJson<T>(...args: string[]): Promise<T> {
  const run = await inferq(...args, '--json');
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as T;
}

beforeAll(async () => {
  stack = await startStack();
  dir = await mkdtemp(join(tmpdir(), 'inferq-cli-'));
});
afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('inferq CLI', () => {
  it('pushes a model and lists it', async () => {
    const model = await inferqJson<{ name: string; version: number; batching: { maxBatchSize: number } }>(
      'models',
      'push',
      demoModel('mlp').path,
      '--name',
      'mlp',
      '--max-batch-size',
      '8',
      '--max-batch-delay-ms',
      '2',
    );
    expect(model).toMatchObject({ name: 'mlp', version: 1, batching: { maxBatchSize: 8 } });
    const list = await inferq('models', 'list');
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^mlp:1 .*features FP32\[\?,64\]/m);
    const cached = await inferqJson<{ responseCache: boolean }>('models', 'push', demoModel('mlp').path, '--name', 'mlp-cached', '--response-cache');
    expect(cached.responseCache).toBe(true);
    expect((await inferq('models', 'list')).stdout).toMatch(/^mlp-cached:1 .* cached /m);
    const encoder = await inferqJson<{ embedding: { pooling: string; normalize: boolean; maxTokens: number } }>(
      'models',
      'push',
      demoModel('transformer').path,
      '--name',
      'encoder',
      '--tokenizer',
      demoModel('transformer').tokenizerPath!,
      '--pooling',
      'cls',
      '--no-normalize',
      '--max-tokens',
      '64',
    );
    expect(encoder.embedding).toMatchObject({ pooling: 'cls', normalize: false, maxTokens: 64 });
    expect((await inferq('models', 'push', demoModel('mlp').path, '--pooling', 'mean')).code).toBe(2);
    const auto = await inferqJson<{ batching: object }>(
      'models',
      'push',
      demoModel('mlp').path,
      '--name',
      'mlp-auto',
      '--max-batch-size',
      '16',
      '--batching',
      'auto',
      '--latency-target-ms',
      '50',
    );
    expect(auto.batching).toEqual({ maxBatchSize: 16, maxBatchDelayMs: 5, mode: 'auto', latencyTargetMs: 50 });
    expect((await inferq('models', 'list')).stdout).toMatch(/^mlp-auto:1 .* batch auto ≤16\/≤5 ms, p99 target 50 ms /m);
    expect((await inferq('models', 'push', demoModel('mlp').path, '--latency-target-ms', '50')).code).toBe(2);
    await stack.startWorker();
  });

  it('submits a job from a file and waits for its result', async () => {
    const input = join(dir, 'input.json');
    await writeFile(input, JSON.stringify(mlpJob(1).inputs));
    const job = await inferqJson<{ status: string; outputs: Array<{ name: string; data: number[] }> }>(
      'jobs',
      'submit',
      '--model',
      'mlp',
      '--input',
      input,
      '--wait',
      '30',
    );
    expect(job.status).toBe('succeeded');
    expect(job.outputs[0]).toMatchObject({ name: 'logits' });
    expect(job.outputs[0]!.data).toHaveLength(16);
  });

  it('submits a .npy tensor file binary and writes the outputs back as .npy', async () => {
    const features = join(dir, 'features.npy');
    await writeFile(features, writeNpy({ datatype: 'FP32', shape: [4, 64], bytes: new Uint8Array(mlpRows(4, 7).buffer) }));
    const job = await inferqJson<{ id: string; status: string }>(
      'jobs',
      'submit',
      '--model',
      'mlp',
      '--input',
      `features=@${features}`,
      '--binary-threshold',
      '0',
      '--wait',
      '30',
    );
    expect(job.status).toBe('succeeded');
    const out = join(dir, 'out');
    const got = await inferq('jobs', 'get', job.id, '--output-dir', out);
    expect(got.code, got.stderr).toBe(0);
    expect(got.stdout).toContain(`wrote ${join(out, 'logits.npy')}`);
    const logits = readNpy(new Uint8Array(await readFile(join(out, 'logits.npy'))));
    expect(logits).toMatchObject({ datatype: 'FP32', shape: [4, 16] });
    const json = (await stack.request('GET', `/v1/jobs/${job.id}`)).json;
    expect(Array.from(new Float32Array(logits.bytes.slice().buffer))).toEqual(json.outputs[0].data);
  });

  it('submits a JSONL file in bulk, counts what was refused, writes the ids, and watches a job to success', async () => {
    const file = join(dir, 'jobs.jsonl');
    const out = join(dir, 'results.jsonl');
    const lines = [
      ...Array.from({ length: 6 }, (_, i) => JSON.stringify(mlpJob(100 + i))),
      JSON.stringify({ model: 'no-such-model', inputs: mlpJob(1).inputs }),
      '{ not json',
      '',
    ];
    await writeFile(file, lines.join('\n'));
    const run = await inferq('jobs', 'bulk', '--file', file, '--concurrency', '3', '--out', out, '--json');
    expect(run.code).toBe(1); // something was refused
    const summary = JSON.parse(run.stdout) as { accepted: number; refused: number; ids: string[]; refusals: Array<{ line: number; code: string }> };
    expect(summary).toMatchObject({ accepted: 6, refused: 2 });
    expect(summary.ids).toHaveLength(6);
    expect(summary.refusals).toEqual([
      expect.objectContaining({ line: 7, code: 'MODEL_NOT_FOUND' }),
      expect.objectContaining({ line: 8, code: 'MALFORMED_LINE' }),
    ]);
    const written = (await readFile(out, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { line: number; id?: string });
    expect(written.map((r) => r.line)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(written.flatMap((r) => (r.id ? [r.id] : []))).toEqual(summary.ids);

    const human = await inferq('jobs', 'bulk', '--file', file);
    expect(human.stdout).toMatch(/^accepted 6 {2}refused 2/);

    const watch = await inferq('jobs', 'watch', summary.ids[5]!);
    expect(watch.code, watch.stderr).toBe(0);
    expect(watch.stdout).toMatch(/Z {2}succeeded\n/);
    expect(watch.stdout).toMatch(new RegExp(`^${summary.ids[5]} {2}succeeded {2}mlp:1`, 'm'));

    const job = await inferqJson<{ id: string; status: string }>('jobs', 'get', summary.ids[0]!);
    expect(job).toMatchObject({ id: summary.ids[0], status: expect.stringMatching(/queued|running|succeeded/) });
  });

  it('prints stats, and JSON that parses', async () => {
    const stats = await inferqJson<{ workersOnline: number; queues: Array<{ model: string }> }>('stats');
    expect(stats.workersOnline).toBeGreaterThanOrEqual(1);
    const human = await inferq('stats');
    expect(human.stdout).toMatch(/^workers \d+ {2}submitted/);
  });

  it('pauses and resumes a model queue, and stats show it', async () => {
    const paused = await inferq('models', 'pause', 'mlp');
    expect(paused.code, paused.stderr).toBe(0);
    expect(paused.stdout).toMatch(/^mlp: paused {2}waiting /);
    expect((await inferq('stats')).stdout).toMatch(/^ {2}mlp: paused {2}waiting /m);
    const resumed = await inferqJson<{ model: string; paused: boolean }>('models', 'resume', 'mlp');
    expect(resumed).toMatchObject({ model: 'mlp', paused: false });
    expect((await inferq('stats')).stdout).not.toMatch(/mlp: paused/);
    expect((await inferq('models', 'pause')).code).toBe(2);
  });

  it("reads a model's retention, sets it in days and clears it back to the default", async () => {
    await stack.registerModel('cli-kept', {}, 'mlp');
    expect((await inferq('models', 'retention', 'cli-kept')).stdout).toMatch(/^cli-kept: jobs kept 7d \(the server default; /);
    const set = await inferqJson<{ retentionS: number; effectiveS: number; source: string }>('models', 'retention', 'cli-kept', '--set', '2d');
    expect(set).toMatchObject({ retentionS: 172_800, effectiveS: 172_800, source: 'model' });
    expect((await inferq('models', 'retention', 'cli-kept')).stdout).toMatch(/^cli-kept: jobs kept 2d \(the model's own, set \S+\)/);
    expect((await inferq('models', 'list')).stdout).toMatch(/^cli-kept:1 .* kept 2d$/m);
    expect((await inferqJson<{ source: string }>('models', 'retention', 'cli-kept', '--clear')).source).toBe('default');
    expect((await inferq('models', 'retention', 'cli-kept', '--set', '30s')).code).toBe(2);
    expect((await inferq('models', 'retention', 'cli-kept', '--set', '1d', '--clear')).code).toBe(2);
  });

  it('retires a version after asking, and names the routing refusal until --reroute', async () => {
    await stack.registerModel('cli-retired', {}, 'mlp');
    await stack.registerModel('cli-retired', {}, 'mlp');
    const asked = await inferq('models', 'retire', 'cli-retired:1');
    expect(asked.code).toBe(1);
    expect(asked.stderr).toMatch(/retire cli-retired:1\? .*\[y\/N\]/);
    expect(asked.stderr).toMatch(/nothing retired/);
    const yes = await runCli({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY, stdin: 'y\n' }, ['models', 'retire', 'cli-retired:1']);
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toMatch(/^retired cli-retired:1 at \S+$/m);
    expect(yes.stdout).toMatch(/^no routing table$/m);
    expect((await stack.request('PUT', '/v1/models/cli-retired/routing', { versions: [{ version: 2, weight: 1 }] })).status).toBe(200);
    const routed = await inferq('models', 'retire', 'cli-retired:2', '--yes');
    expect(routed.code).toBe(1);
    expect(routed.stderr).toMatch(/^inferq: MODEL_VERSION_ROUTED \(409\): .*version 2 \(weight 1 of 1\)/);
    const rerouted = await inferqJson<{ versions: Array<{ version: number }>; routing: unknown[] }>('models', 'retire', 'cli-retired', '--reroute', '--yes');
    expect(rerouted.versions.map((v) => v.version)).toEqual([2, 1]);
    expect(rerouted.routing).toEqual([]);
    expect((await inferq('models', 'retire', 'cli-retired:x', '--yes')).code).toBe(2);
  });

  it('prints device time per model version for the jobs that ran, with a totals row', async () => {
    const usage = await inferqJson<{
      groupBy: string;
      items: Array<{ model: string; modelVersion: number; jobs: number; deviceMs: number }>;
      total: { jobs: number };
    }>('usage', '--group-by', 'model');
    expect(usage.groupBy).toBe('model');
    const mlp = usage.items.find((i) => i.model === 'mlp' && i.modelVersion === 1);
    expect(mlp?.jobs).toBeGreaterThanOrEqual(1);
    expect(mlp?.deviceMs).toBeGreaterThan(0);
    expect(usage.total.jobs).toBeGreaterThanOrEqual(mlp!.jobs);
    const human = await inferq('usage', '--group-by', 'model', '--from', new Date(Date.now() - 3_600_000).toISOString());
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toMatch(/^MODEL +JOBS +ITEMS +DEVICE TIME +SHARE$/m);
    expect(human.stdout).toMatch(/^mlp:1 +[\d,]+ +[\d,]+ +[\d.]+ (ms|s|min|h) +[\d.]+%$/m);
    expect(human.stdout).toMatch(/^total .* 100\.0%$/m);
    expect((await inferq('usage', '--group-by', 'worker')).code).toBe(2);
  });

  it('submits a job that keeps its inputs, deletes it, and reports the purged job as 410 JOB_PURGED', async () => {
    const input = join(dir, 'keep.json');
    await writeFile(input, JSON.stringify(mlpJob(2).inputs));
    const job = await inferqJson<{ id: string; status: string; keepInputs: boolean }>(
      'jobs',
      'submit',
      '--model',
      'mlp',
      '--input',
      input,
      '--keep-inputs',
      '--wait',
      '30',
    );
    expect(job).toMatchObject({ status: 'succeeded', keepInputs: true });
    const tombstone = await inferqJson<{ id: string; purgeReason: string; purgedAt: string }>('jobs', 'delete', job.id);
    expect(tombstone).toMatchObject({ id: job.id, purgeReason: 'deleted', purgedAt: expect.any(String) });
    const human = await inferq('jobs', 'delete', job.id);
    expect(human.code, human.stderr).toBe(0);
    expect(human.stdout).toContain(`${job.id}  succeeded  purged ${tombstone.purgedAt} (deleted)`);
    const gone = await inferq('jobs', 'get', job.id);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toMatch(/JOB_PURGED \(410\)/);
  });

  it('reports API errors with their code and exit status 1, and usage mistakes with 2', async () => {
    const missing = await inferq('jobs', 'get', '00000000-0000-4000-8000-000000000000');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/JOB_NOT_FOUND \(404\)/);
    const usage = await inferq('jobs', 'submit', '--input', 'x.json');
    expect(usage.code).toBe(2);
    expect(usage.stderr).toMatch(/--model is required/);
    expect((await inferq('jobs', 'explode')).code).toBe(2);
  });
});
