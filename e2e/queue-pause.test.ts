import { describe, expect, it } from 'vitest';
import { mlpJob, waitFor } from '@inferq/test-utils';
import { screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// An operator pauses a model's queue from the console's overview and resumes
// it from the model page, against the real stack with a CPU worker for `mlp`.

const suite = useConsoleSuite(async (stack) => {
  await stack.registerModel('mlp');
  await stack.startWorker({ WORKER_MODELS: 'mlp' });
});

const queueRow = () => suite.page.getByRole('table', { name: 'Queue depth per model and priority' }).getByRole('row').filter({ hasText: 'mlp' });
const isPaused = async () => (await suite.stack.request('GET', '/v1/stats')).json.queues.find((q: { model: string }) => q.model === 'mlp')?.paused as boolean;

describe('pausing a model queue in the console', () => {
  it('pauses the queue from the overview: the badge shows, and a job submitted meanwhile stays queued', async () => {
    await suite.signIn();
    await suite.page.getByRole('button', { name: 'Pause queue of mlp' }).click();
    await suite.page.getByRole('button', { name: 'Resume queue of mlp' }).waitFor();
    await queueRow().getByText('paused', { exact: true }).waitFor();
    expect(await isPaused()).toBe(true);
    const { json } = await suite.stack.request('POST', '/v1/jobs', mlpJob(1));
    expect((await suite.stack.request('GET', `/v1/jobs/${json.id}`)).json.status).toBe('queued');
    await screenshot(suite.page, 'overview-queue-paused');

    await suite.openPage('Models');
    await suite.page.getByRole('link', { name: 'mlp', exact: true }).click();
    await suite.heading('mlp').waitFor();
    await suite.page.getByText('paused', { exact: true }).waitFor();
    await suite.page.getByRole('button', { name: 'Resume queue of mlp' }).click();
    await suite.page.getByRole('button', { name: 'Pause queue of mlp' }).waitFor();
    expect(await suite.page.getByText('paused', { exact: true }).count()).toBe(0);
    expect(await isPaused()).toBe(false);
    await waitFor(async () => (await suite.stack.request('GET', `/v1/jobs/${json.id}`)).json.status === 'succeeded', {
      timeoutMs: 30_000,
      what: 'the kept job to run after resume',
    });
    await screenshot(suite.page, 'model-queue-resumed');
  });
});
