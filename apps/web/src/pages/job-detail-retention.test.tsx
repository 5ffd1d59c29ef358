// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { Job, Principal } from '@inferq/contracts';
import { JobDetailPage } from './job-detail-page.tsx';

const JOB_ID = '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b';
const PURGED_AT = '2025-06-09T09:30:00.007Z';

const job: Job = {
  id: JOB_ID,
  model: 'mlp',
  modelVersion: 2,
  priority: 'normal',
  status: 'succeeded',
  createdAt: '2025-06-02T09:30:00.000Z',
  startedAt: '2025-06-02T09:30:00.004Z',
  finishedAt: '2025-06-02T09:30:00.007Z',
  queueMs: 4,
  inferMs: 2.4,
  batchSize: 2,
  batchId: null,
  workerId: null,
  items: 1,
  deviceMs: 1.25,
  attempts: 1,
  cacheHit: false,
  error: null,
  metadata: { team: 'search' },
  deadline: null,
  webhookUrl: null,
  keepInputs: false,
  inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256 }],
  outputs: [],
  links: { self: `/v1/jobs/${JOB_ID}`, cancel: `/v1/jobs/${JOB_ID}/cancel` },
};
const { inputs: _inputs, outputs: _outputs, ...summary } = job;
const tombstone = (reason: 'retention' | 'deleted', extra: object = {}) => ({ ...summary, metadata: {}, purgedAt: PURGED_AT, purgeReason: reason, ...extra });
const purgedProblem = (reason: 'retention' | 'deleted', extra: object = {}) => ({
  type: 'https://inferq.dev/problems/job-purged',
  title: 'The job was purged: only its tombstone is kept',
  status: 410,
  code: 'JOB_PURGED',
  detail: `job ${JOB_ID} was purged`,
  purgedAt: PURGED_AT,
  purgeReason: reason,
  job: tombstone(reason, extra),
});

const writer: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: ['jobs:read', 'jobs:write'], admin: false, weight: 1 };
const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** The API as the page sees it: the job until a DELETE, then 410. Returns the methods called on the job. */
function renderPage(answer: { job?: object; purged?: 'retention' | 'deleted'; tombstone?: object }) {
  const calls: string[] = [];
  let purged = answer.purged;
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const path = url.split('?')[0];
      if (path === '/v1/me') return json(200, writer);
      if (path === `/v1/jobs/${JOB_ID}`) {
        const method = init?.method ?? 'GET';
        calls.push(method);
        if (method === 'DELETE') {
          purged = 'deleted';
          return json(200, tombstone('deleted'));
        }
        return purged ? json(410, purgedProblem(purged, answer.tombstone)) : json(200, answer.job ?? job);
      }
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/jobs/${JOB_ID}`]}>
        <Routes>
          <Route path="/jobs/:id" element={<JobDetailPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return calls;
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('JobDetailPage retention', () => {
  it('deletes the job only after a confirmation, then shows it purged', async () => {
    const calls = renderPage({});
    fireEvent.click(await screen.findByRole('button', { name: 'Delete job' }));
    const dialog = screen.getByRole('alertdialog');
    expect(dialog.textContent).toMatch(/inputs, outputs and metadata are deleted for good/);
    fireEvent.click(within(dialog).getByRole('button', { name: 'Keep it' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls).not.toContain('DELETE');

    fireEvent.click(screen.getByRole('button', { name: 'Delete job' }));
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Delete for good' }));
    expect(await screen.findByText('This job was purged')).toBeTruthy();
    expect(calls.filter((m) => m === 'DELETE')).toHaveLength(1);
    expect(screen.getByRole('status').textContent).toMatch(/it was deleted/);
  });

  it("shows a purged job's page from the 410: when, why, and what the tombstone kept", async () => {
    renderPage({ purged: 'retention' });
    const status = await screen.findByRole('status');
    expect(status.textContent).toMatch(/its retention period ran out, 7 d after it finished \(the retention of mlp if it sets one/);
    expect(within(status).getByRole('link', { name: 'mlp' }).getAttribute('href')).toBe('/models/mlp');
    expect(status.textContent).toContain(new Date(PURGED_AT).getFullYear().toString());
    const kept = within(screen.getByLabelText('What was kept'));
    expect(kept.getByText('mlp:2')).toBeTruthy();
    expect(kept.getByText('1.3 ms')).toBeTruthy();
    expect(kept.getByText(/\(retention ran out\)$/)).toBeTruthy();
    expect(kept.queryByText('Inputs dropped')).toBeNull();
    expect(screen.queryByRole('button', { name: 'Delete job' })).toBeNull();
  });

  it('says a deleted job was deleted and where the audit log names who, and when its inputs had been dropped', async () => {
    renderPage({ purged: 'deleted', tombstone: { inputsDroppedAt: '2025-06-02T10:30:00.000Z' } });
    const status = await screen.findByRole('status');
    expect(status.textContent).toMatch(/it was deleted \(DELETE \/v1\/jobs\/:id, .*job:deleted\)/);
    expect(status.textContent).toMatch(/Its outputs, metadata and webhook are gone \(its inputs had been dropped on /);
    const kept = within(screen.getByLabelText('What was kept'));
    expect(kept.getByText('Inputs dropped')).toBeTruthy();
    expect(kept.getByText(/\(deleted\)$/)).toBeTruthy();
  });

  it('says when the inputs were dropped and offers no re-submit; a running job has no delete', async () => {
    renderPage({ job: { ...job, status: 'failed', error: { code: 'INFERENCE_FAILED', message: 'boom' }, inputs: [], inputsDroppedAt: PURGED_AT } });
    expect(await screen.findByText(/after the server's input retention/)).toBeTruthy();
    expect(screen.queryByRole('button', { name: 'Re-submit' })).toBeNull();
    expect(screen.getByRole('button', { name: 'Delete job' })).toBeTruthy();
    cleanup();
    renderPage({ job: { ...job, status: 'running', finishedAt: null } });
    await screen.findByText('Job details');
    await waitFor(() => expect(screen.getByText('mlp:2')).toBeTruthy());
    expect(screen.queryByRole('button', { name: 'Delete job' })).toBeNull();
  });
});
