import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, type Stack } from '@inferq/test-utils';
import { launchBrowser, newConsolePage, openDialog, screenshot } from './browser.ts';

// An operator retires a routed version from the model page: the refusal
// names the routing table, the reroute retires it, and the API then refuses
// jobs for it. Against the real stack (no worker needed).

let stack: Stack;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  stack = await startStack();
  await stack.registerModel('mlp');
  await stack.registerModel('mlp');
  expect(
    (
      await stack.request('PUT', '/v1/models/mlp/routing', {
        versions: [
          { version: 1, weight: 3 },
          { version: 2, weight: 1 },
        ],
      })
    ).status,
  ).toBe(200);
  browser = await launchBrowser();
  page = await newConsolePage(browser);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await stack?.close();
});

describe('retiring a model version in the console', () => {
  it('shows the routing refusal with its reason, then retires with reroute; the API refuses jobs for the version', async () => {
    await page.goto(`${stack.baseUrl}/models/mlp`);
    await page.getByLabel('API key').fill(ADMIN_KEY);
    await page.getByRole('button', { name: 'Sign in' }).click();
    const versions = page.getByRole('table', { name: 'Registered versions' });
    const dialog = page.getByRole('alertdialog', { name: 'Retire v1 of mlp?' });
    await openDialog(versions.getByRole('button', { name: 'Retire v1' }), dialog);
    await dialog.getByRole('button', { name: 'Retire v1' }).click();
    await dialog.getByRole('alert').getByText('version 1 (weight 3 of 4)', { exact: false }).waitFor();
    await screenshot(page, 'model-retire-routed');
    expect((await stack.request('GET', '/v1/models/mlp:1')).json.retiredAt).toBeUndefined();

    await dialog.getByRole('button', { name: 'Retire and take it out of routing' }).click();
    await versions.getByRole('row').filter({ hasText: 'v1' }).getByText('retired', { exact: true }).waitFor();
    expect((await stack.request('GET', '/v1/models/mlp:1')).json.retiredAt).toEqual(expect.any(String));
    expect((await stack.request('GET', '/v1/models/mlp/routing')).json.versions).toEqual([{ version: 2, weight: 1 }]);
    expect((await stack.request('POST', '/v1/jobs', { ...mlpJob(1), model: 'mlp:1' })).json.code).toBe('MODEL_VERSION_RETIRED');
    await screenshot(page, 'model-retired');
  });
});
