import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, type Stack } from '@inferq/test-utils';
import { launchBrowser, newConsolePage, openDialog, screenshot } from './browser.ts';

// An operator cancels, then retries, every job matching the jobs page's
// filters, against the real stack. No worker runs, so the jobs stay queued.

let stack: Stack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  browser = await launchBrowser();
  page = await newConsolePage(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const statuses = async (): Promise<string[]> =>
  ((await stack.request('GET', '/v1/jobs?model=mlp&limit=100')).json.items as Array<{ status: string }>).map((j) => j.status).sort();

describe('bulk actions on the jobs page', () => {
  it('cancels the queued jobs matching the filters after showing their count, then retries them', async () => {
    for (let i = 0; i < 3; i++) expect((await stack.request('POST', '/v1/jobs', mlpJob(i))).status).toBe(202);
    await page.goto(stack.baseUrl);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { level: 1, name: 'Overview' }).waitFor();

    await page.goto(`${stack.baseUrl}/jobs?status=queued`);
    const confirm = page.getByRole('alertdialog', { name: 'Cancel 3 jobs?' });
    await openDialog(page.getByRole('button', { name: 'Cancel matching' }), confirm);
    await screenshot(page, 'jobs-bulk-cancel-confirm');
    expect(await statuses()).toEqual(['queued', 'queued', 'queued']);
    await confirm.getByRole('button', { name: 'Cancel 3 jobs' }).click();
    await page.getByRole('status').filter({ hasText: 'Canceled 3 of 3 jobs matched.' }).waitFor();
    expect(await statuses()).toEqual(['canceled', 'canceled', 'canceled']);

    await page.goto(`${stack.baseUrl}/jobs?status=canceled`);
    const retry = page.getByRole('alertdialog', { name: 'Retry 3 jobs?' });
    await openDialog(page.getByRole('button', { name: 'Retry matching' }), retry);
    await retry.getByRole('button', { name: 'Retry 3 jobs' }).click();
    await page.getByRole('status').filter({ hasText: 'Retried 3 of 3 jobs matched.' }).waitFor();
    expect(await statuses()).toEqual(['canceled', 'canceled', 'canceled', 'queued', 'queued', 'queued']);
    await screenshot(page, 'jobs-bulk-retried');
  });
});
