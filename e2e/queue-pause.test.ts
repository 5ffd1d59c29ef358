import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, waitFor, type Stack } from '@inferq/test-utils';
import { launchBrowser, newConsolePage, screenshot } from './browser.ts';

// An operator pauses a model's queue from the console's overview and resumes
// it from the model page, against the real stack with a CPU worker for `mlp`.

let stack: Stack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  await stack.startWorker({ WORKER_MODELS: 'mlp' });
  browser = await launchBrowser();
  page = await newConsolePage(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

const heading = (name: string) => page.getByRole('heading', { level: 1, name });
const queueRow = () => page.getByRole('table', { name: 'Queue depth per model and priority' }).getByRole('row').filter({ hasText: 'mlp' });
const isPaused = async () => (await stack.request('GET', '/v1/stats')).json.queues.find((q: { model: string }) => q.model === 'mlp')?.paused as boolean;

describe('pausing a model queue in the console', () => {
  it('pauses the queue from the overview: the badge shows, and a job submitted meanwhile stays queued', async () => {
    await page.goto(stack.baseUrl);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await heading('Overview').waitFor();
    await page.getByRole('button', { name: 'Pause queue of mlp' }).click();
    await page.getByRole('button', { name: 'Resume queue of mlp' }).waitFor();
    await queueRow().getByText('paused', { exact: true }).waitFor();
    expect(await isPaused()).toBe(true);
    const { json } = await stack.request('POST', '/v1/jobs', mlpJob(1));
    expect((await stack.request('GET', `/v1/jobs/${json.id}`)).json.status).toBe('queued');
    await screenshot(page, 'overview-queue-paused');

    await page.getByRole('navigation').getByRole('link', { name: 'Models', exact: true }).first().click();
    await page.getByRole('link', { name: 'mlp', exact: true }).click();
    await heading('mlp').waitFor();
    await page.getByText('paused', { exact: true }).waitFor();
    await page.getByRole('button', { name: 'Resume queue of mlp' }).click();
    await page.getByRole('button', { name: 'Pause queue of mlp' }).waitFor();
    expect(await page.getByText('paused', { exact: true }).count()).toBe(0);
    expect(await isPaused()).toBe(false);
    await waitFor(async () => (await stack.request('GET', `/v1/jobs/${json.id}`)).json.status === 'succeeded', {
      timeoutMs: 30_000,
      what: 'the kept job to run after resume',
    });
    await screenshot(page, 'model-queue-resumed');
  });
});
