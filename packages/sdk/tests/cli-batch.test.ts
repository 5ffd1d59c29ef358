import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, type Stack } from '@inferq/test-utils';
import type { BatchOutputLine } from '../src/index.ts';
import { runCli } from './run-cli.ts';

// `inferq batch submit --wait` as a real process against the real API and a
// worker: a JSONL file in, the batch's output and error files out.

let stack: Stack;
let dir: string;
beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  await stack.startWorker();
  await stack.waitUntilServed('mlp');
  dir = await mkdtemp(join(tmpdir(), 'inferq-cli-batch-'));
}, 120_000);
afterAll(async () => {
  await stack?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

const inferq = (...args: string[]) => runCli({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY }, ['batch', ...args]);
const readJsonl = async (path: string) =>
  (await readFile(path, 'utf8'))
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as BatchOutputLine);

describe('inferq batch', () => {
  it('submit --wait uploads the file, waits for the batch and writes one answer per request, keyed by custom_id', async () => {
    const good = ['r1', 'r2', 'r3'].map((id, i) => ({ custom_id: id, method: 'POST', url: '/v1/jobs', body: mlpJob(i + 1) }));
    const wrongShape = { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 3], data: [1, 2, 3] }] };
    const lines = [...good, { custom_id: 'bad', method: 'POST', url: '/v1/jobs', body: wrongShape }];
    const requests = join(dir, 'requests.jsonl');
    await writeFile(requests, lines.map((l) => `${JSON.stringify(l)}\n`).join(''));
    const [output, errors] = [join(dir, 'out.jsonl'), join(dir, 'err.jsonl')];

    const run = await inferq('submit', requests, '--metadata', 'run=test', '--wait', '--output', output, '--errors', errors);
    expect(run.code, run.stderr).toBe(0);
    const id = run.stdout.split('\n')[0]!;
    expect(id).toMatch(/^batch_[0-9a-f]{32}$/);
    expect(run.stdout).toMatch(new RegExp(`^${id}  completed  /v1/jobs  4/4 done \\(3 completed, 1 failed\\)`, 'm'));
    expect(run.stdout).toMatch(/^ {2}metadata run=test$/m);

    const answers = await readJsonl(output);
    expect(answers.map((a) => a.custom_id)).toEqual(['r1', 'r2', 'r3']);
    for (const a of answers) expect(a.response).toMatchObject({ status_code: 200, body: { status: 'succeeded', model: 'mlp' } });
    const refused = await readJsonl(errors);
    expect(refused).toEqual([expect.objectContaining({ custom_id: 'bad', response: expect.objectContaining({ status_code: 400 }) })]);

    const got = await inferq('get', id, '--json');
    expect(JSON.parse(got.stdout)).toMatchObject({ id, status: 'completed', request_counts: { total: 4, completed: 3, failed: 1 } });
    expect((await inferq('list')).stdout).toContain(id);
    const cancel = await inferq('cancel', id);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toMatch(/BATCH_NOT_CANCELABLE \(409\)/);
  });
});
