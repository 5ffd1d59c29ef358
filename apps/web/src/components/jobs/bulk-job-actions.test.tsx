// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { BulkJobActionResult, JobFilterQuery, Principal } from '@inferq/contracts';
import { BulkJobActions } from './bulk-job-actions.tsx';

const writer: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: ['jobs:read', 'jobs:write'], admin: false, weight: 1 };
const reader: Principal = { ...writer, scopes: ['jobs:read'] };

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });
const result = (fields: Partial<BulkJobActionResult>): BulkJobActionResult => ({
  matched: 0,
  touched: 0,
  skipped: 0,
  truncated: false,
  dryRun: false,
  ...fields,
});

/** Renders the actions over a stubbed API; `answers` replies to the bulk calls in order. Returns the bulk requests sent. */
function renderActions(principal: Principal, filter: JobFilterQuery, answers: Array<[number, unknown]>) {
  const sent: Array<{ path: string; body: unknown }> = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const path = url.split('?')[0]!;
      if (path === '/v1/me') return json(200, principal);
      if (path.startsWith('/v1/jobs/bulk-')) {
        sent.push({ path, body: JSON.parse(String(init?.body)) });
        const [status, body] = answers.shift() ?? [500, {}];
        return json(status, body);
      }
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <BulkJobActions filter={() => filter} />
    </QueryClientProvider>,
  );
  return sent;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('BulkJobActions', () => {
  it('counts with a dry run, asks with the count, then cancels with the same filter and shows what it touched', async () => {
    const filter = { model: 'mlp', errorCode: 'MODEL_LOAD_FAILED' };
    const sent = renderActions(writer, filter, [
      [200, result({ matched: 3, dryRun: true })],
      [200, result({ matched: 3, touched: 3 })],
    ]);
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel matching' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Cancel 3 jobs?' });
    expect(dialog.textContent).toContain('3 queued jobs match these filters.');
    expect(sent).toEqual([{ path: '/v1/jobs/bulk-cancel', body: { filter, limit: 1000, dryRun: true } }]);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel 3 jobs' }));
    expect((await screen.findByRole('status')).textContent).toContain('Canceled 3 of 3 jobs matched.');
    expect(sent[1]).toEqual({ path: '/v1/jobs/bulk-cancel', body: { filter, limit: 1000, dryRun: false } });
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('says when more match than one run takes, and how many were skipped', async () => {
    const sent = renderActions(writer, { status: 'failed' }, [
      [200, result({ matched: 1500, truncated: true, dryRun: true })],
      [200, result({ matched: 1500, touched: 998, skipped: 2, truncated: true })],
    ]);
    fireEvent.click(await screen.findByRole('button', { name: 'Retry matching' }));
    const dialog = await screen.findByRole('alertdialog', { name: 'Retry 1000 jobs?' });
    expect(dialog.textContent).toContain('Only the oldest 1000 are acted on');
    fireEvent.click(within(dialog).getByRole('button', { name: 'Retry 1000 jobs' }));
    const status = (await screen.findByRole('status')).textContent;
    expect(status).toContain('Retried 998 of 1500 jobs matched. 2 skipped. More match than 1000: run it again for the rest.');
    expect(sent.map((s) => s.path)).toEqual(['/v1/jobs/bulk-retry', '/v1/jobs/bulk-retry']);
  });

  it('asks nothing when no job matches, and Back sends nothing more', async () => {
    const sent = renderActions(writer, { model: 'mlp' }, [
      [200, result({ dryRun: true })],
      [200, result({ matched: 2, dryRun: true })],
    ]);
    fireEvent.click(await screen.findByRole('button', { name: 'Cancel matching' }));
    expect((await screen.findByRole('status')).textContent).toContain('No queued jobs match these filters.');
    expect(screen.queryByRole('alertdialog')).toBeNull();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel matching' }));
    fireEvent.click(within(await screen.findByRole('alertdialog')).getByRole('button', { name: 'Back' }));
    await waitFor(() => expect(screen.queryByRole('alertdialog')).toBeNull());
    expect(sent).toHaveLength(2);
    expect(sent.every((s) => (s.body as { dryRun: boolean }).dryRun)).toBe(true);
  });

  it('shows the refusal when the API answers with a problem', async () => {
    renderActions(writer, { model: 'mlp' }, [[400, { type: 'about:blank', title: 'Bad filter', status: 400, code: 'JOB_FILTER_EMPTY' }]]);
    fireEvent.click(await screen.findByRole('button', { name: 'Retry matching' }));
    expect((await screen.findByRole('alert')).textContent).toContain('JOB_FILTER_EMPTY');
  });

  it('is disabled without a filter, and absent for a key without jobs:write', async () => {
    renderActions(writer, {}, []);
    expect((await screen.findByRole('button', { name: 'Cancel matching' })).hasAttribute('disabled')).toBe(true);
    expect(screen.getByRole('button', { name: 'Retry matching' }).hasAttribute('disabled')).toBe(true);
    cleanup();
    renderActions(reader, { model: 'mlp' }, []);
    await waitFor(() => expect(vi.mocked(fetch)).toHaveBeenCalled());
    // Once /v1/me has answered, nothing renders for a reader.
    await waitFor(() => expect(screen.queryByRole('region', { name: 'Bulk actions' })).toBeNull());
    expect(screen.queryByRole('button', { name: 'Cancel matching' })).toBeNull();
  });
});
