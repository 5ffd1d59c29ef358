// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { Principal } from '@inferq/contracts';
import { JobDetailPage } from './job-detail-page.tsx';

const JOB_ID = '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b';
const BATCH_ID = '0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c';
const SHA = 'dd0c9cb069581704e97163ab20b0ef2040b3e232f6c334bd556bb8b42f42f70c';

// Untyped on purpose: the provenance fields are new to the Job contract.
const job = {
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
  attempts: 1,
  cacheHit: false,
  error: null,
  metadata: {},
  deadline: null,
  webhookUrl: null,
  inputs: [],
  outputs: [],
  links: { self: `/v1/jobs/${JOB_ID}`, cancel: `/v1/jobs/${JOB_ID}/cancel` },
  batchId: BATCH_ID,
  workerId: 'box-cpu-4242',
  device: 'cpu',
  provider: 'cpu',
  modelSha256: SHA,
  items: 3,
  deviceMs: 1.8,
};
const unbatched = { batchId: null, workerId: null, device: null, provider: null, modelSha256: null, items: null, deviceMs: null };

const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json' } });

function renderPage(principal: Principal, answer: object) {
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const path = url.split('?')[0];
      if (path === '/v1/me') return json(200, principal);
      if (path === `/v1/jobs/${JOB_ID}`) return json(200, answer);
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/jobs/${JOB_ID}`]}>
        <Routes>
          <Route path="/jobs/:id" element={<JobDetailPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const admin: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: [], admin: true, weight: 1 };
const writer: Principal = { ...admin, scopes: ['jobs:read', 'jobs:write'], admin: false };

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('JobDetailPage provenance', () => {
  it('shows where the job ran and its share of the batch’s device time, with the batch linked for an admin', async () => {
    renderPage(admin, job);
    const provenance = within(await screen.findByLabelText('Provenance'));
    expect(await provenance.findByRole('link', { name: BATCH_ID })).toHaveProperty('pathname', `/inference-batches/${BATCH_ID}`);
    expect(provenance.getByText('box-cpu-4242')).toBeTruthy();
    expect(provenance.getAllByText('cpu')).toHaveLength(2); // device and provider
    expect(provenance.getByText('dd0c9cb06958').getAttribute('title')).toBe(SHA);
    expect(provenance.getByText('3')).toBeTruthy();
    expect(provenance.getByText('1.8 ms · 75.0% of the batch’s 2.4 ms')).toBeTruthy();
  });

  it('shows a non-admin key the batch id without a link, and a failed job as not charged', async () => {
    const failed = { ...job, status: 'failed', error: { code: 'INPUT_SHAPE_MISMATCH', message: 'bad shape' }, deviceMs: null };
    renderPage(writer, failed);
    // Re-submit needs jobs:write: once it shows, the page knows the key is not an admin.
    await screen.findByRole('button', { name: 'Re-submit' });
    const provenance = within(screen.getByLabelText('Provenance'));
    expect(provenance.getByText(BATCH_ID)).toBeTruthy();
    expect(provenance.queryByRole('link')).toBeNull();
    expect(provenance.getByText('not charged')).toBeTruthy();
  });

  it('says a cache hit ran no batch and cost no device time', async () => {
    renderPage(admin, { ...job, ...unbatched, cacheHit: true, inferMs: null, batchSize: null });
    expect(await screen.findByText(/Answered from the response cache: no batch ran/)).toBeTruthy();
    expect(screen.queryByLabelText('Provenance')).toBeNull();
  });
});
