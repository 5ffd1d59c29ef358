import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, waitFor } from '@inferq/test-utils';
import { screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// Finding any job in the console: by id prefix, error code, error message and
// (as an admin) API key, with the filters in the URL so a reload or a shared
// link shows the same list. One CPU worker serves `mlp` and `cnn-broken`,
// whose artifact in S3 no longer matches its sha256, so its jobs really fail.

const jobs = { ok: '', broken: '', theirs: '' };
let otherKeyId = '';

const image = Array.from({ length: 3 * 32 * 32 }, (_, i) => Math.cos(i * 0.37));

async function corruptArtifact(model: string): Promise<void> {
  const { rows } = await suite.stack.ctx.pool.query<{ artifact_key: string }>('SELECT artifact_key FROM models WHERE name = $1', [model]);
  const key = rows[0]!.artifact_key;
  const bytes = await suite.stack.ctx.storage.getObject(key);
  await suite.stack.ctx.storage.putObject(
    key,
    Uint8Array.from(bytes, (b, i) => (i % 1000 === 0 ? b ^ 0xff : b)),
  );
}

async function submit(body: object, headers: Record<string, string> = {}): Promise<string> {
  const { status, json } = await suite.stack.request('POST', '/v1/jobs', body, headers);
  expect(status, JSON.stringify(json)).toBe(202);
  return json.id as string;
}

const finished = async (id: string) => {
  const { json } = await suite.stack.request('GET', `/v1/jobs/${id}`);
  return ['succeeded', 'failed'].includes(json.status) ? json : undefined;
};

const suite = useConsoleSuite(async (stack) => {
  await stack.registerModel('mlp');
  await stack.registerModel('cnn-broken', {}, 'cnn');
  await corruptArtifact('cnn-broken');
  await stack.startWorker({ WORKER_MODELS: 'mlp,cnn-broken' });
  const key = await stack.request('POST', '/v1/keys', { name: 'search-team' });
  expect(key.status).toBe(201);
  otherKeyId = key.json.id;
  jobs.ok = await submit(mlpJob(1));
  jobs.broken = await submit({ model: 'cnn-broken', inputs: [{ name: 'image', datatype: 'FP32', shape: [1, 3, 32, 32], data: image }] });
  jobs.theirs = await submit(mlpJob(2), { authorization: `Bearer ${key.json.secret}` });
  const broken = await waitFor(() => finished(jobs.broken), { what: 'the broken model’s job to fail' });
  expect(broken.status).toBe('failed');
  expect(broken.error.code).toBe('MODEL_ARTIFACT_INVALID');
  await waitFor(async () => (await finished(jobs.ok)) && (await finished(jobs.theirs)), { what: 'the mlp jobs to finish' });
});

const table = () => suite.page.getByRole('table', { name: 'Jobs' });
/** The ids the jobs table shows (each row links its job, titled with the full id). */
const shownIds = () =>
  table()
    .getByRole('link')
    .evaluateAll((links) => links.map((a) => a.getAttribute('title') ?? '').sort());
async function waitForRows(ids: string[], what: string): Promise<void> {
  const want = [...ids].sort();
  await waitFor(async () => JSON.stringify(await shownIds()) === JSON.stringify(want), { what: `the jobs table to show ${what}` });
}
const searchParams = () => new URL(suite.page.url()).searchParams;
async function clearFilters(): Promise<void> {
  await suite.page.getByRole('button', { name: 'Clear filters' }).click();
  await waitForRows(Object.values(jobs), 'every job');
}

describe('searching jobs in the console', () => {
  it('lists every job, a failed one with its error code beside its status', async () => {
    await suite.signIn();
    await suite.openPage('Jobs');
    await waitForRows(Object.values(jobs), 'every job');
    const failedRow = table()
      .getByRole('row')
      .filter({ hasText: jobs.broken.slice(0, 8) });
    await failedRow.getByText('MODEL_ARTIFACT_INVALID').waitFor();
    expect(await failedRow.getByText('failed', { exact: true }).count()).toBe(1);
    await screenshot(suite.page, 'jobs-failed-code');
  });

  it('finds a job by the first digits of its id, applied on Enter', async () => {
    await suite.page.getByLabel('Job id').fill(jobs.ok.slice(0, 13));
    await suite.page.getByLabel('Job id').press('Enter');
    await waitForRows([jobs.ok], 'the job with that id prefix');
    expect(searchParams().get('id')).toBe(jobs.ok.slice(0, 13));
    await clearFilters();
  });

  it('finds failed jobs by error code, and by text of the message when the box is left', async () => {
    await suite.page.getByLabel('Error code').fill('model_artifact_invalid');
    await suite.page.getByLabel('Error code').press('Enter');
    await waitForRows([jobs.broken], 'the job that failed with that code');
    expect(searchParams().get('errorCode')).toBe('MODEL_ARTIFACT_INVALID');
    await clearFilters();

    await suite.page.getByLabel('Error message').fill('does not match its SHA256');
    await suite.page.getByLabel('Error message').blur();
    await waitForRows([jobs.broken], 'the job whose message has that text');
    expect(searchParams().get('errorText')).toBe('does not match its SHA256');
    await clearFilters();
  });

  it("narrows to one API key's jobs as an admin", async () => {
    const keys = suite.page.getByRole('combobox', { name: 'API key' });
    await keys.locator('option', { hasText: 'search-team' }).waitFor({ state: 'attached' });
    await keys.selectOption(otherKeyId);
    await waitForRows([jobs.theirs], "the other key's job");
    expect(searchParams().get('keyId')).toBe(otherKeyId);
    await clearFilters();
  });

  it('keeps the filters in the URL: a reload, or the link opened afresh, shows the same list', async () => {
    await suite.page.getByRole('combobox', { name: 'Status' }).selectOption('failed');
    await suite.page.getByLabel('Error message').fill('sha256');
    await suite.page.getByLabel('Error message').press('Enter');
    await waitForRows([jobs.broken], 'the failed job with that text');
    const link = suite.page.url();
    expect(Object.fromEntries(searchParams())).toEqual({ status: 'failed', errorText: 'sha256' });

    await suite.page.reload();
    await waitForRows([jobs.broken], 'the same list after a reload');
    expect(await suite.page.getByLabel('Error message').inputValue()).toBe('sha256');
    expect(await suite.page.getByRole('combobox', { name: 'Status' }).inputValue()).toBe('failed');

    // Someone else opens the link: signed out, they sign in and land on the same filtered list.
    const context = await suite.browser.newContext({ viewport: { width: 1280, height: 900 } });
    const shared = await context.newPage();
    await shared.goto(link);
    await shared.getByLabel('API key', { exact: true }).fill(ADMIN_KEY);
    await shared.getByRole('button', { name: 'Sign in' }).click();
    const sharedTable = shared.getByRole('table', { name: 'Jobs' });
    await sharedTable.getByRole('link', { name: jobs.broken.slice(0, 8) }).waitFor();
    expect(await sharedTable.getByRole('link').count()).toBe(1);
    expect(Object.fromEntries(new URL(shared.url()).searchParams)).toEqual({ status: 'failed', errorText: 'sha256' });
    await screenshot(shared, 'jobs-search-shared-link');
    await context.close();
  });
});
