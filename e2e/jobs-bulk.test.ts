import { describe, expect, it } from 'vitest';
import { mlpJob } from '@inferq/test-utils';
import { openDialog, screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// An operator cancels, then retries, every job matching the jobs page's
// filters, against the real stack. No worker runs, so the jobs stay queued.

const suite = useConsoleSuite(async (stack) => {
  await stack.registerModel('mlp');
});

const statuses = async (): Promise<string[]> =>
  ((await suite.stack.request('GET', '/v1/jobs?model=mlp&limit=100')).json.items as Array<{ status: string }>).map((j) => j.status).sort();

describe('bulk actions on the jobs page', () => {
  it('cancels the queued jobs matching the filters after showing their count, then retries them', async () => {
    for (let i = 0; i < 3; i++) expect((await suite.stack.request('POST', '/v1/jobs', mlpJob(i))).status).toBe(202);
    await suite.signIn();

    await suite.page.goto(`${suite.stack.baseUrl}/jobs?status=queued`);
    const confirm = suite.page.getByRole('alertdialog', { name: 'Cancel 3 jobs?' });
    await openDialog(suite.page.getByRole('button', { name: 'Cancel matching' }), confirm);
    await screenshot(suite.page, 'jobs-bulk-cancel-confirm');
    expect(await statuses()).toEqual(['queued', 'queued', 'queued']);
    await confirm.getByRole('button', { name: 'Cancel 3 jobs' }).click();
    await suite.page.getByRole('status').filter({ hasText: 'Canceled 3 of 3 jobs matched.' }).waitFor();
    expect(await statuses()).toEqual(['canceled', 'canceled', 'canceled']);

    await suite.page.goto(`${suite.stack.baseUrl}/jobs?status=canceled`);
    const retry = suite.page.getByRole('alertdialog', { name: 'Retry 3 jobs?' });
    await openDialog(suite.page.getByRole('button', { name: 'Retry matching' }), retry);
    await retry.getByRole('button', { name: 'Retry 3 jobs' }).click();
    await suite.page.getByRole('status').filter({ hasText: 'Retried 3 of 3 jobs matched.' }).waitFor();
    expect(await statuses()).toEqual(['canceled', 'canceled', 'canceled', 'queued', 'queued', 'queued']);
    await screenshot(suite.page, 'jobs-bulk-retried');
  });
});
