import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, waitFor } from '@inferq/test-utils';
import { screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// A Batch API batch in the console against the real stack: a JSONL file of
// three mlp requests uploaded and a batch created through the API, one CPU
// worker running its jobs; the console lists it, follows it to its end,
// downloads its output and lists its jobs (and no other job).

const suite = useConsoleSuite(async (stack) => {
  await stack.registerModel('mlp');
  await stack.startWorker({ WORKER_MODELS: 'mlp' });
  await stack.waitUntilServed('mlp');
});

const CUSTOM_IDS = ['r1', 'r2', 'r3'];

/** Uploads the lines as a `purpose=batch` file and creates a `/v1/jobs` batch over it; resolves to the batch id. */
async function createBatch(lines: string[]): Promise<string> {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([lines.join('\n') + '\n'], { type: 'application/jsonl' }), 'requests.jsonl');
  const upload = await fetch(`${suite.stack.baseUrl}/v1/files`, { method: 'POST', body: form, headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(upload.status, await upload.clone().text()).toBe(200);
  const file = (await upload.json()) as { id: string };
  const body = { input_file_id: file.id, endpoint: '/v1/jobs', completion_window: '24h', metadata: { run: 'e2e' } };
  const { status, json } = await suite.stack.request('POST', '/v1/batches', body);
  expect(status, JSON.stringify(json)).toBe(200);
  return json.id as string;
}

describe('Batch API batches in the console', () => {
  it('lists a batch, follows it to completion, downloads its output and lists its jobs', async () => {
    // A job outside the batch, which its jobs list must leave out.
    const { json: other } = await suite.stack.request('POST', '/v1/jobs', mlpJob(99));
    const lines = CUSTOM_IDS.map((customId, i) => JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/jobs', body: mlpJob(i) }));
    const batchId = await createBatch(lines);

    await suite.signIn();
    await suite.openPage('Batches');
    const row = suite.page.getByRole('table', { name: 'Batches' }).getByRole('row').filter({ hasText: batchId });
    await row.getByText('run=e2e').waitFor();
    await screenshot(suite.page, 'batches');

    await row.getByRole('link', { name: batchId }).click();
    await suite.heading('Batch').waitFor();
    // The page polls every 2 s until the batch has ended.
    await suite.page.getByRole('status', { name: 'Batch status' }).filter({ hasText: 'completed' }).waitFor({ timeout: 60_000 });
    expect(await suite.page.getByRole('meter', { name: 'Batch progress' }).getAttribute('aria-valuetext')).toBe('3 of 3 (100.0%)');
    const counts = suite.page.getByLabel('Request counts');
    for (const [label, value] of [
      ['Total', '3'],
      ['Completed', '3'],
      ['Failed', '0'],
      ['Remaining', '0'],
    ] as const) {
      expect(await counts.getByText(label, { exact: true }).locator('xpath=following-sibling::dd').textContent()).toBe(value);
    }
    expect(await suite.page.getByRole('button', { name: 'Cancel batch' }).count()).toBe(0);
    await screenshot(suite.page, 'batch-detail');

    const [download] = await Promise.all([suite.page.waitForEvent('download'), suite.page.getByRole('button', { name: 'Download output' }).click()]);
    expect(download.suggestedFilename()).toBe(`${batchId}-output.jsonl`);
    const output = (await readFile(await download.path(), 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as { custom_id: string; response: { status_code: number; body: { id: string } } });
    expect(output.map((o) => o.custom_id).sort()).toEqual(CUSTOM_IDS);
    expect(output.map((o) => o.response.status_code)).toEqual([200, 200, 200]);
    const jobIds = output.map((o) => o.response.body.id);

    await suite.page.getByRole('link', { name: 'Jobs of this batch' }).click();
    await suite.heading('Jobs').waitFor();
    expect(new URL(suite.page.url()).searchParams.get('batch')).toBe(batchId);
    expect(await suite.page.getByLabel('Batch id').inputValue()).toBe(batchId);
    const jobLinks = suite.page.getByRole('table', { name: 'Jobs' }).getByRole('link');
    const hrefs = await waitFor(
      async () => {
        const found = await jobLinks.evaluateAll((links) => links.map((link) => link.getAttribute('href')));
        return found.length === jobIds.length ? found : undefined;
      },
      { what: 'the batch’s three jobs to be listed' },
    );
    expect(hrefs.sort()).toEqual(jobIds.map((id) => `/jobs/${id}`).sort());
    expect(hrefs).not.toContain(`/jobs/${other.id}`);
    await screenshot(suite.page, 'batch-jobs');
  });
});
