// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { BulkBatch, BulkBatchList } from '@inferq/sdk';
import { BatchesPage } from './batches-page.tsx';

const NOW_S = Math.floor(Date.now() / 1000);
const batchId = (n: number) => `batch_${String(n).padStart(32, '0')}`;

const batch = (n: number, fields: Partial<BulkBatch> = {}): BulkBatch => ({
  id: batchId(n),
  object: 'batch',
  endpoint: '/v1/jobs',
  errors: null,
  input_file_id: 'file-0190a1b29d8e7f6a8b5c4d3e2f1a0b9c',
  completion_window: '24h',
  status: 'completed',
  output_file_id: null,
  error_file_id: null,
  created_at: NOW_S - 120,
  in_progress_at: NOW_S - 118,
  expires_at: NOW_S + 86_280,
  finalizing_at: null,
  completed_at: NOW_S - 60,
  failed_at: null,
  expired_at: null,
  cancelling_at: null,
  cancelled_at: null,
  request_counts: { total: 3, completed: 3, failed: 0 },
  metadata: null,
  ...fields,
});

const list = (data: BulkBatch[], hasMore = false): BulkBatchList => ({
  object: 'list',
  data,
  first_id: data[0]?.id ?? null,
  last_id: data.at(-1)?.id ?? null,
  has_more: hasMore,
});

const json = (body: unknown) => new Response(JSON.stringify(body), { status: 200, headers: { 'content-type': 'application/json' } });

/** The page over a stubbed API: `pages` answers the list by its `after` (none: the first page), the last answer of a key again. */
function renderPage(pages: Record<string, Array<BulkBatchList>>) {
  const queries: URLSearchParams[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const [path, query] = url.split('?');
      if (path !== '/v1/batches') return new Response('{}', { status: 404 });
      const params = new URLSearchParams(query);
      queries.push(params);
      const answers = pages[params.get('after') ?? '']!;
      return json(answers.length > 1 ? answers.shift() : answers[0]);
    }),
  );
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={['/batches']}>
        <Routes>
          <Route path="/batches" element={<BatchesPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return queries;
}

const rows = async () =>
  within(await screen.findByRole('table', { name: 'Batches' }))
    .getAllByRole('row')
    .slice(1);

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('BatchesPage', () => {
  it('lists batches newest first, each linking to its page with its status, endpoint, progress, age and metadata', async () => {
    const running = batch(2, {
      status: 'in_progress',
      endpoint: '/v1/embeddings',
      completed_at: null,
      request_counts: { total: 10, completed: 4, failed: 1 },
      metadata: { team: 'search', run: 'nightly' },
    });
    renderPage({ '': [list([running, batch(1)])] });
    const [first, second] = await rows();
    const cells = (row: HTMLElement) => [...row.querySelectorAll('td')].map((td) => td.textContent);
    expect(cells(first!)).toEqual([batchId(2), 'in_progress', '/v1/embeddings', '5 / 101 failed', '2 min ago', 'run=nightly, team=search']);
    expect(cells(second!)).toEqual([batchId(1), 'completed', '/v1/jobs', '3 / 3', '2 min ago', '—']);
    expect(
      within(first!)
        .getByRole('link', { name: batchId(2) })
        .getAttribute('href'),
    ).toBe(`/batches/${batchId(2)}`);
    expect(
      within(second!)
        .getByRole('link', { name: batchId(1) })
        .getAttribute('href'),
    ).toBe(`/batches/${batchId(1)}`);
  });

  it('pages with the cursor: Next asks for the batches after the last one shown, Previous goes back', async () => {
    const queries = renderPage({ '': [list([batch(3), batch(2)], true)], [batchId(2)]: [list([batch(1)])] });
    await rows();
    expect(queries.at(-1)?.get('limit')).toBe('20');
    fireEvent.click(screen.getByRole('button', { name: 'Next' }));
    await waitFor(async () => expect((await rows()).map((row) => row.querySelector('a')?.textContent)).toEqual([batchId(1)]));
    expect(queries.at(-1)?.get('after')).toBe(batchId(2));
    expect((screen.getByRole('button', { name: 'Next' }) as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByRole('button', { name: 'Previous' }));
    await waitFor(async () => expect((await rows()).length).toBe(2));
  });

  it('refreshes while a batch shown is still running', async () => {
    const running = batch(1, { status: 'in_progress', completed_at: null, request_counts: { total: 3, completed: 1, failed: 0 } });
    renderPage({ '': [list([running]), list([batch(1)])] });
    expect((await rows())[0]!.textContent).toContain('in_progress');
    await waitFor(async () => expect((await rows())[0]!.textContent).toContain('completed'), { timeout: 5000 });
  });

  it('says when the key has no batches yet', async () => {
    renderPage({ '': [list([])] });
    expect(await screen.findByText('No batches yet')).toBeTruthy();
  });
});
