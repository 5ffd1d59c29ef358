// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { ModelRetention } from '@inferq/contracts';
import { ModelRetentionPanel } from './model-retention.tsx';

const DAY_S = 86_400;
const byDefault: ModelRetention = { retentionS: null, effectiveS: 7 * DAY_S, source: 'default', inputRetentionS: 0 };
const overridden: ModelRetention = {
  retentionS: 2 * DAY_S,
  effectiveS: 2 * DAY_S,
  source: 'model',
  inputRetentionS: 3_600,
  updatedAt: new Date().toISOString(),
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** The PATCHes sent to the API, each answered as saved. */
function stubPatches() {
  const patches: Array<{ url: string; body: unknown }> = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const body = JSON.parse(String(init?.body)) as { retentionS: number | null };
      patches.push({ url: url.split('?')[0]!, body });
      return json(200, { name: 'mlp', ...(body.retentionS === null ? byDefault : overridden), retentionS: body.retentionS, updatedAt: null });
    }),
  );
  return patches;
}

function renderPanel(retention: ModelRetention, editable: boolean) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <ModelRetentionPanel name="mlp" retention={retention} editable={editable} />
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ModelRetentionPanel', () => {
  it('shows the default and the input retention, with no editor for a reader', () => {
    renderPanel(byDefault, false);
    expect(screen.getByText('7d')).toBeTruthy();
    expect(screen.getByText('server default')).toBeTruthy();
    expect(document.body.textContent).toMatch(/JOB_RETENTION_S\. A key with a retention of its own/);
    expect(document.body.textContent).toMatch(/Inputs of succeeded jobs are dropped as soon as they finish/);
    expect(screen.queryByRole('button', { name: 'Change retention of mlp' })).toBeNull();
  });

  it('shows an override as such, and says when inputs are kept with the job', () => {
    renderPanel({ ...overridden, inputRetentionS: null }, false);
    expect(screen.getByText('2d')).toBeTruthy();
    expect(screen.getByText('override')).toBeTruthy();
    expect(document.body.textContent).toMatch(/This model's own retention, set .*: it wins over any key's/);
    expect(document.body.textContent).toMatch(/Inputs are kept as long as the job/);
  });

  it('sets a duration, refusing a bad one before sending anything', async () => {
    const patches = stubPatches();
    renderPanel(byDefault, true);
    fireEvent.click(screen.getByRole('button', { name: 'Change retention of mlp' }));
    expect(screen.queryByRole('button', { name: 'Use default' })).toBeNull();
    fireEvent.change(screen.getByLabelText('Retention of mlp'), { target: { value: '2 weeks' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    expect(screen.getByRole('alert').textContent).toMatch(/a number of seconds, or with a unit/);
    expect(patches).toEqual([]);
    fireEvent.change(screen.getByLabelText('Retention of mlp'), { target: { value: '2d' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches).toEqual([{ url: '/v1/models/mlp', body: { retentionS: 2 * DAY_S } }]));
    expect(await screen.findByRole('button', { name: 'Change retention of mlp' })).toBeTruthy();
  });

  it('clears an override back to the default with Use default', async () => {
    const patches = stubPatches();
    renderPanel(overridden, true);
    fireEvent.click(screen.getByRole('button', { name: 'Change retention of mlp' }));
    expect((screen.getByLabelText('Retention of mlp') as HTMLInputElement).value).toBe('2d');
    fireEvent.click(screen.getByRole('button', { name: 'Use default' }));
    await waitFor(() => expect(patches).toEqual([{ url: '/v1/models/mlp', body: { retentionS: null } }]));
  });
});
