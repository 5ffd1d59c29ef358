import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, type Stack } from '@inferq/test-utils';
import { runCli, type CliRun } from './run-cli.ts';

// `inferq jobs list` as a real process against the real API. No worker: the
// jobs stay queued, and two are marked failed in the database the way a
// worker stores a failure (error code and message on the row).

let stack: Stack;
const ids: Record<'mine' | 'oom' | 'load' | 'theirs', string> = { mine: '', oom: '', load: '', theirs: '' };
let otherKey = { id: '', secret: '' };

function inferq(...args: string[]): Promise<CliRun> {
  return runCli({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY }, ['jobs', 'list', ...args]);
}

/** The ids `jobs list --json` prints for these flags. */
async function listed(...args: string[]): Promise<string[]> {
  const run = await inferq(...args, '--json');
  expect(run.code, run.stderr).toBe(0);
  return (JSON.parse(run.stdout) as Array<{ id: string }>).map((j) => j.id);
}

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  const created = await stack.request('POST', '/v1/keys', { name: 'other-team' });
  expect(created.status).toBe(201);
  otherKey = { id: created.json.id, secret: created.json.secret };
  for (const [i, name] of (['mine', 'oom', 'load', 'theirs'] as const).entries()) {
    const headers: Record<string, string> = name === 'theirs' ? { authorization: `Bearer ${otherKey.secret}` } : {};
    const { status, json } = await stack.request('POST', '/v1/jobs', mlpJob(i), headers);
    expect(status).toBe(202);
    ids[name] = json.id;
  }
  const fail = (id: string, code: string, message: string) =>
    stack.ctx.pool.query(`UPDATE jobs SET status = 'failed', error_code = $2, error_message = $3, finished_at = now() WHERE id = $1`, [id, code, message]);
  await fail(ids.oom, 'INFERENCE_FAILED', 'CUDA out of memory while allocating 2 GiB');
  await fail(ids.load, 'MODEL_LOAD_FAILED', 'S3 credentials missing on worker w-7');
}, 120_000);
afterAll(() => stack?.close());

describe('inferq jobs list', () => {
  it('prints one line per job, newest first, with a failed job’s error code', async () => {
    const run = await inferq();
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines.map((l) => l.split('  ')[0])).toEqual([ids.theirs, ids.load, ids.oom, ids.mine]);
    expect(lines[1]).toMatch(new RegExp(`^${ids.load}  failed  mlp:1  normal  created \\S+Z  MODEL_LOAD_FAILED$`));
    expect(lines[3]).toMatch(/ queued {2}mlp:1 {2}normal {2}created \S+Z$/);
  });

  it('finds jobs by id prefix, error code, error text, API key and status', async () => {
    expect(await listed('--id', ids.load.slice(0, 13))).toEqual([ids.load]);
    expect(await listed('--error-code', 'inference_failed')).toEqual([ids.oom]);
    expect(await listed('--error-text', 'out of MEMORY')).toEqual([ids.oom]);
    expect(await listed('--key-id', otherKey.id)).toEqual([ids.theirs]);
    expect(await listed('--status', 'queued', '--since', '1h')).toEqual([ids.theirs, ids.mine]);
    expect(await listed('--until', '1h')).toEqual([]);
  });

  it('stops at --limit and says more match; prints a line when none does', async () => {
    const run = await inferq('--limit', '2');
    expect(run.stdout.trim().split('\n')).toHaveLength(2);
    expect(run.stderr).toMatch(/more jobs match/);
    expect((await inferq('--error-code', 'QUEUE_FULL')).stdout).toBe('no jobs match\n');
  });

  it('refuses a malformed flag with exit status 2 and the usage line', async () => {
    const run = await inferq('--since', 'last tuesday');
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/--since must be an ISO time or a duration/);
    expect(run.stderr).toMatch(/usage: inferq jobs list /);
  });
});
