import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpRows, startStack, type Stack } from '@inferq/test-utils';
import { createClient, InferqError, tensor, type InferqClient } from '../src/index.ts';
import { runCli, type CliRun } from './run-cli.ts';

// jobs.bulkCancel / bulkRetry and `inferq jobs cancel-all` / `retry-all` against the real API.
// No worker runs, so submitted jobs stay queued until canceled.

let stack: Stack;
let admin: InferqClient;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  admin = createClient({ baseUrl: stack.baseUrl, apiKey: ADMIN_KEY });
});
afterAll(async () => {
  await stack?.close();
});

/** A key of its own per test, so its jobs are the test's. */
async function tenant(): Promise<{ client: InferqClient; keyId: string; secret: string }> {
  const key = await admin.keys.create({ name: 'bulk', scopes: ['jobs:read', 'jobs:write'] });
  return { client: createClient({ baseUrl: stack.baseUrl, apiKey: key.secret }), keyId: key.id, secret: key.secret };
}
async function submitMany(client: InferqClient, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) ids.push((await client.jobs.submit({ model: 'mlp', inputs: [tensor('features', mlpRows(1, i), [1, 64])] })).id);
  return ids;
}
const statuses = async (client: InferqClient, ids: string[]) => Promise.all(ids.map(async (id) => (await client.jobs.get(id)).status));

describe('jobs.bulkCancel and jobs.bulkRetry', () => {
  it('counts on a dry run, cancels up to the limit, then retries the canceled ones as new jobs', async () => {
    const { client, keyId } = await tenant();
    const ids = await submitMany(client, 3);
    expect(await client.jobs.bulkCancel({ model: 'mlp' }, { dryRun: true })).toEqual({ matched: 3, touched: 0, skipped: 0, truncated: false, dryRun: true });
    expect(await client.jobs.bulkCancel({ model: 'mlp' }, { limit: 2 })).toEqual({ matched: 3, touched: 2, skipped: 0, truncated: true, dryRun: false });
    expect(await statuses(client, ids)).toEqual(['canceled', 'canceled', 'queued']);
    // An admin reaches the key's jobs by its id.
    expect(await admin.jobs.bulkCancel({ keyId })).toMatchObject({ matched: 1, touched: 1 });
    expect(await client.jobs.bulkRetry({ status: 'canceled' })).toMatchObject({ matched: 3, touched: 3, truncated: false });
    const all = [];
    for await (const job of client.jobs.list({ model: 'mlp' })) all.push(job.status);
    expect(all.sort()).toEqual(['canceled', 'canceled', 'canceled', 'queued', 'queued', 'queued']);
  });

  it('throws InferqError JOB_FILTER_EMPTY for an empty filter', async () => {
    const { client } = await tenant();
    // Each call starts only when awaited: a second promise made up front could reject before anything handles it.
    for (const call of [() => client.jobs.bulkCancel({}), () => client.jobs.bulkRetry({}, { dryRun: true })]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(InferqError);
      expect(err).toMatchObject({ status: 400, code: 'JOB_FILTER_EMPTY' });
    }
  });
});

/** The CLI as a real process; `stdin` is what it reads for the confirmation (none: it ends at once). */
function inferq(apiKey: string, args: string[], stdin = ''): Promise<CliRun> {
  return runCli({ baseUrl: stack.baseUrl, apiKey, stdin }, args);
}

describe('inferq jobs cancel-all and retry-all', () => {
  it('shows the dry-run count and acts only when the answer is yes', async () => {
    const { client, secret } = await tenant();
    const ids = await submitMany(client, 2);
    const unanswered = await inferq(secret, ['jobs', 'cancel-all', '--model', 'mlp']);
    expect(unanswered.code).toBe(1);
    expect(unanswered.stderr).toContain('2 queued jobs match');
    expect(unanswered.stderr).toContain('cancel 2 jobs? [y/N]');
    expect(unanswered.stderr).toContain('nothing canceled');
    const no = await inferq(secret, ['jobs', 'cancel-all', '--model', 'mlp'], 'n\n');
    expect(no.code).toBe(1);
    expect(await statuses(client, ids)).toEqual(['queued', 'queued']);
    const yes = await inferq(secret, ['jobs', 'cancel-all', '--model', 'mlp', '--status', 'queued'], 'y\n');
    expect(yes.code, yes.stderr).toBe(0);
    expect(yes.stdout).toBe('canceled 2 of 2 matching queued jobs\n');
    expect(await statuses(client, ids)).toEqual(['canceled', 'canceled']);
  });

  it('--dry-run only counts, --yes skips the question, --limit bounds it, --json prints the result', async () => {
    const { client, secret } = await tenant();
    await submitMany(client, 3);
    const dry = await inferq(secret, ['jobs', 'cancel-all', '--since', '1h', '--dry-run', '--limit', '2']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toBe('3 queued jobs match; at most 2 would be canceled\nmore match than --limit 2: run it again for the rest\n');
    const canceled = await inferq(secret, ['jobs', 'cancel-all', '--priority', 'normal', '--yes', '--json']);
    expect(canceled.code, canceled.stderr).toBe(0);
    expect(JSON.parse(canceled.stdout)).toEqual({ matched: 3, touched: 3, skipped: 0, truncated: false, dryRun: false });
    const retried = await inferq(secret, ['jobs', 'retry-all', '--status', 'canceled', '--limit', '2', '--yes']);
    expect(retried.code, retried.stderr).toBe(0);
    expect(retried.stdout).toBe('retried 2 of 3 matching failed, canceled or expired jobs\nmore match than --limit 2: run it again for the rest\n');
    const none = await inferq(secret, ['jobs', 'retry-all', '--error-code', 'model_load_failed']);
    expect(none.code).toBe(0);
    expect(none.stdout).toBe('0 failed, canceled or expired jobs match; at most 1000 would be retried\n');
  });

  it('refuses to run without a filter option, or with a malformed one, before any request', async () => {
    const { secret } = await tenant();
    for (const args of [
      ['jobs', 'cancel-all', '--yes'],
      ['jobs', 'retry-all', '--dry-run'],
      ['jobs', 'cancel-all', '--status', 'nope'],
      ['jobs', 'cancel-all', '--model', 'mlp', '--limit', '0'],
    ]) {
      const run = await inferq(secret, args);
      expect(run.code, args.join(' ')).toBe(2);
      expect(run.stderr).toContain('usage: inferq jobs');
    }
  });
});
