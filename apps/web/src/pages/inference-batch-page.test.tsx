// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { Batch, Principal } from '@inferq/contracts';
import { InferenceBatchPage } from './inference-batch-page.tsx';

const BATCH_ID = '0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c';
const KEY_ID = '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f';
const SHA = 'dd0c9cb069581704e97163ab20b0ef2040b3e232f6c334bd556bb8b42f42f70c';

const batch: Batch = {
  id: BATCH_ID,
  model: 'mlp',
  modelVersion: 2,
  modelSha256: SHA,
  workerId: 'box-cuda-0-4242',
  device: 'cuda:0',
  provider: 'cuda',
  size: 3,
  items: 8,
  startedAt: '2025-06-02T09:30:00.004Z',
  inferMs: 2.4,
  jobs: [
    { id: '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b', ownerKeyId: KEY_ID, status: 'succeeded', items: 6, queueMs: 4, deviceMs: 1.8 },
    { id: '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a2c', ownerKeyId: KEY_ID, status: 'succeeded', items: 1, queueMs: 2, deviceMs: 0.3 },
    { id: '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a3d', ownerKeyId: KEY_ID, status: 'failed', items: 1, queueMs: 2, deviceMs: null },
  ],
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });
const notFound = { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' };

function stubApi(principal: Principal, batchAnswer: () => Response) {
  const paths: string[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const path = url.split('?')[0]!;
      paths.push(path);
      if (path === '/v1/me') return json(200, principal);
      if (path === `/v1/inference-batches/${BATCH_ID}`) return batchAnswer();
      return json(404, notFound);
    }),
  );
  return { paths };
}

function renderPage() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/inference-batches/${BATCH_ID}`]}>
        <Routes>
          <Route path="/inference-batches/:id" element={<InferenceBatchPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const admin: Principal = { keyId: KEY_ID, scopes: [], admin: true, weight: 1 };
const reader: Principal = { keyId: KEY_ID, scopes: ['jobs:read', 'jobs:write'], admin: false, weight: 1 };

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('InferenceBatchPage', () => {
  it('shows an admin where the batch ran and its jobs, each linking to its page with its share of the device time', async () => {
    stubApi(admin, () => json(200, batch));
    renderPage();
    const facts = within(await screen.findByLabelText('Batch provenance'));
    expect(facts.getByRole('link', { name: 'mlp:2' }).getAttribute('href')).toBe('/models/mlp');
    expect(facts.getByText('dd0c9cb06958').getAttribute('title')).toBe(SHA);
    for (const text of ['box-cuda-0-4242', 'cuda:0', 'cuda', '3', '8', '2.4 ms']) expect(facts.getByText(text)).toBeTruthy();

    const jobs = screen.getByRole('table', { name: 'Jobs in this batch' });
    const rows = within(jobs).getAllByRole('row').slice(1) as HTMLTableRowElement[];
    expect(rows.map((r) => within(r).getByRole('link').getAttribute('href'))).toEqual(batch.jobs.map((j) => `/jobs/${j.id}`));
    expect(within(rows[0]!).getByRole('meter').getAttribute('aria-valuetext')).toBe('75.0%');
    expect(within(rows[1]!).getByRole('meter').getAttribute('aria-valuetext')).toBe('12.5%');
    expect(within(rows[2]!).queryByRole('meter')).toBeNull();
    expect(rows[2]!.textContent).toContain('failed');
  });

  it('tells a non-admin key the page is for admins, without asking the API for the batch', async () => {
    const { paths } = stubApi(reader, () => json(200, batch));
    renderPage();
    expect(await screen.findByText('Admins only')).toBeTruthy();
    expect(screen.queryByLabelText('Batch provenance')).toBeNull();
    expect(paths).not.toContain(`/v1/inference-batches/${BATCH_ID}`);
  });

  it('says when the batch does not exist', async () => {
    stubApi(admin, () => json(404, { ...notFound, detail: `batch ${BATCH_ID} does not exist` }));
    renderPage();
    expect(await screen.findByText('Inference batch not found')).toBeTruthy();
  });
});
