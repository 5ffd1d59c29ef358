// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import type { Principal } from '@inferq/contracts';
import { JobsPage } from './jobs-page.tsx';

const JOB_ID = '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b';
const KEY_ID = '5f0e8c2a-1b3d-4e5f-8a9b-0c1d2e3f4a5b';

const failedJob = {
  id: JOB_ID,
  model: 'mlp',
  modelVersion: 1,
  priority: 'normal',
  status: 'failed',
  createdAt: '2025-06-02T09:30:00.000Z',
  startedAt: null,
  finishedAt: '2025-06-02T09:30:00.007Z',
  queueMs: null,
  inferMs: null,
  batchSize: null,
  batchId: null,
  workerId: null,
  items: null,
  deviceMs: null,
  attempts: 1,
  cacheHit: false,
  error: { code: 'MODEL_LOAD_FAILED', message: 'S3 credentials missing on worker w-7' },
  metadata: {},
  deadline: null,
  webhookUrl: null,
  links: { self: `/v1/jobs/${JOB_ID}`, cancel: `/v1/jobs/${JOB_ID}/cancel` },
};
const apiKey = {
  id: KEY_ID,
  name: 'search-team',
  prefix: 'iq_abc',
  scopes: [],
  rateLimitPerMin: null,
  weight: 1,
  createdAt: failedJob.createdAt,
  revokedAt: null,
};

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

/** The page at `url` for `principal`; resolves to the job-list queries it sent, newest last. */
function renderPage(principal: Principal, url = '/jobs', page: { items: unknown[]; nextCursor: string | null } = { items: [failedJob], nextCursor: null }) {
  const listQueries: URLSearchParams[] = [];
  const fetchMock = vi.fn(async (url: string) => {
    const [path, query] = url.split('?');
    if (path === '/v1/me') return json(principal);
    if (path === '/v1/models') return json({ items: [] });
    if (path === '/v1/keys') return json({ items: [apiKey] });
    if (path === '/v1/jobs') {
      listQueries.push(new URLSearchParams(query));
      return json(page);
    }
    return new Response('{}', { status: 404 });
  });
  vi.stubGlobal('fetch', fetchMock);
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  function Location() {
    const location = useLocation();
    return <output aria-label="URL">{location.search}</output>;
  }
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[url]}>
        <Routes>
          <Route
            path="/jobs"
            element={
              <>
                <JobsPage />
                <Location />
              </>
            }
          />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { listQueries, fetchMock, url: () => screen.getByLabelText('URL').textContent };
}

const admin: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: [], admin: true, weight: 1 };
const reader: Principal = { ...admin, scopes: ['jobs:read'], admin: false };

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('JobsPage search', () => {
  it('says a short page looked through a month of jobs, and lets Next look further back', async () => {
    const { listQueries } = renderPage(reader, '/jobs?status=failed', { items: [], nextCursor: 'MjAyNi0xMC0yN3ww' });
    expect(await screen.findByText('Nothing here in this stretch of time')).toBeTruthy();
    const next = screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement;
    expect(next.disabled).toBe(false);
    fireEvent.click(next);
    await waitFor(() => expect(listQueries.at(-1)?.get('cursor')).toBe('MjAyNi0xMC0yN3ww'));
  });

  it('shows a failed job’s error code beside its status', async () => {
    renderPage(reader);
    const row = within((await screen.findByText('MODEL_LOAD_FAILED')).closest('tr')!);
    expect(row.getByText('failed')).toBeTruthy();
    expect(row.getByText('MODEL_LOAD_FAILED').getAttribute('title')).toBe('S3 credentials missing on worker w-7');
  });

  it('reads every filter from the URL and sends it, so a shared link shows the same list', async () => {
    const { listQueries } = renderPage(admin, `/jobs?status=failed&id=0190a1b2&keyId=${KEY_ID}&errorCode=MODEL_LOAD_FAILED&errorText=credentials`);
    await screen.findByText('MODEL_LOAD_FAILED', { selector: 'span' });
    expect(Object.fromEntries(listQueries.at(-1)!)).toMatchObject({
      status: 'failed',
      id: '0190a1b2',
      keyId: KEY_ID,
      errorCode: 'MODEL_LOAD_FAILED',
      errorText: 'credentials',
    });
    expect((screen.getByLabelText('Job id') as HTMLInputElement).value).toBe('0190a1b2');
    expect((screen.getByLabelText('Error message') as HTMLInputElement).value).toBe('credentials');
    await waitFor(() => expect((screen.getByLabelText('API key') as HTMLSelectElement).value).toBe(KEY_ID));
  });

  it('applies a search box on Enter or when it is left, not on each keystroke, and refuses what the API would', async () => {
    const { listQueries, url } = renderPage(reader);
    await screen.findByText('MODEL_LOAD_FAILED');
    const sent = listQueries.length;
    const idBox = screen.getByLabelText('Job id');
    fireEvent.change(idBox, { target: { value: '0190A1B2' } });
    expect(url()).toBe('');
    fireEvent.keyDown(idBox, { key: 'Enter' });
    await waitFor(() => expect(url()).toBe('?id=0190a1b2'));
    await waitFor(() => expect(listQueries.at(-1)?.get('id')).toBe('0190a1b2'));
    expect(listQueries.length).toBe(sent + 1);

    const codeBox = screen.getByLabelText('Error code');
    fireEvent.change(codeBox, { target: { value: 'model_load_failed' } });
    fireEvent.blur(codeBox);
    await waitFor(() => expect(url()).toBe('?id=0190a1b2&errorCode=MODEL_LOAD_FAILED'));

    fireEvent.change(idBox, { target: { value: 'not-an-id' } });
    fireEvent.keyDown(idBox, { key: 'Enter' });
    expect((await screen.findByRole('alert')).textContent).toMatch(/job id/i);
    expect(url()).toBe('?id=0190a1b2&errorCode=MODEL_LOAD_FAILED');

    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(url()).toBe(''));
    expect((screen.getByLabelText('Job id') as HTMLInputElement).value).toBe('');
  });

  it('lists a Batch API batch’s jobs from ?batch=, shows the filter in its box, and clears it', async () => {
    const batch = 'batch_0190a1b2a4417c3e9b1d5e6f7a8b9c0d';
    const { listQueries, url } = renderPage(reader, `/jobs?batch=${batch}`);
    await screen.findByText('MODEL_LOAD_FAILED');
    expect(Object.fromEntries(listQueries.at(-1)!)).toMatchObject({ batch });
    expect((screen.getByLabelText('Batch id') as HTMLInputElement).value).toBe(batch);
    fireEvent.click(screen.getByRole('button', { name: 'Clear filters' }));
    await waitFor(() => expect(url()).toBe(''));
    await waitFor(() => expect(listQueries.at(-1)?.has('batch')).toBe(false));
    expect((screen.getByLabelText('Batch id') as HTMLInputElement).value).toBe('');
  });

  it('offers admins an API key to narrow to, and hides it from other keys', async () => {
    const admins = renderPage(admin);
    const select = await screen.findByRole('combobox', { name: 'API key' });
    await within(select).findByRole('option', { name: /search-team/ });
    fireEvent.change(select, { target: { value: KEY_ID } });
    await waitFor(() => expect(admins.url()).toBe(`?keyId=${KEY_ID}`));
    cleanup();

    const readers = renderPage(reader);
    await screen.findByText('MODEL_LOAD_FAILED');
    expect(screen.queryByRole('combobox', { name: 'API key' })).toBeNull();
    expect(readers.fetchMock.mock.calls.some(([u]) => String(u).startsWith('/v1/keys'))).toBe(false);
  });
});
