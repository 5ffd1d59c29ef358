import { describe, expect, it } from 'vitest';
import { mlpJob } from '@inferq/test-utils';
import { openDialog, screenshot } from './browser.ts';
import { useConsoleSuite } from './console-suite.ts';

// An operator retires a routed version from the model page: the refusal
// names the routing table, the reroute retires it, and the API then refuses
// jobs for it. Against the real stack (no worker needed).

const suite = useConsoleSuite(async (stack) => {
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
});

describe('retiring a model version in the console', () => {
  it('shows the routing refusal with its reason, then retires with reroute; the API refuses jobs for the version', async () => {
    await suite.signIn('/models/mlp', 'mlp');
    const versions = suite.page.getByRole('table', { name: 'Registered versions' });
    const dialog = suite.page.getByRole('alertdialog', { name: 'Retire v1 of mlp?' });
    await openDialog(versions.getByRole('button', { name: 'Retire v1' }), dialog);
    await dialog.getByRole('button', { name: 'Retire v1' }).click();
    await dialog.getByRole('alert').getByText('version 1 (weight 3 of 4)', { exact: false }).waitFor();
    await screenshot(suite.page, 'model-retire-routed');
    expect((await suite.stack.request('GET', '/v1/models/mlp:1')).json.retiredAt).toBeUndefined();

    await dialog.getByRole('button', { name: 'Retire and take it out of routing' }).click();
    await versions.getByRole('row').filter({ hasText: 'v1' }).getByText('retired', { exact: true }).waitFor();
    expect((await suite.stack.request('GET', '/v1/models/mlp:1')).json.retiredAt).toEqual(expect.any(String));
    expect((await suite.stack.request('GET', '/v1/models/mlp/routing')).json.versions).toEqual([{ version: 2, weight: 1 }]);
    expect((await suite.stack.request('POST', '/v1/jobs', { ...mlpJob(1), model: 'mlp:1' })).json.code).toBe('MODEL_VERSION_RETIRED');
    await screenshot(suite.page, 'model-retired');
  });
});
