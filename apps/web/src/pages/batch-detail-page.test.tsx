// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import { exampleBulkBatch, type Principal } from '@inferq/contracts';
import type { BulkBatch } from '@inferq/sdk';
import { saveBlob } from '../lib/download.ts';
import { BatchDetailPage } from './batch-detail-page.tsx';

// The browser's save is the one thing not run: what it was handed is checked instead.
vi.mock('../lib/download.ts', () => ({ saveBlob: vi.fn() }));

const BATCH_ID = 'batch_0190a1b2a4417c3e9b1d5e6f7a8b9c0d';
const INPUT_ID = 'file-0190a1b29d8e7f6a8b5c4d3e2f1a0b9c';
const OUTPUT_ID = `${INPUT_ID}-output`;
const ERRORS_ID = `${INPUT_ID}-errors`;
const NOW_S = 1_748_856_600;

const running: BulkBatch = {
  ...exampleBulkBatch,
  id: BATCH_ID,
  input_file_id: INPUT_ID,
  created_at: NOW_S - 12,
  in_progress_at: NOW_S - 10,
  expires_at: NOW_S + 86_388,
  request_counts: { total: 10, completed: 4, failed: 1 },
  metadata: { run: 'nightly' },
};
const completed: BulkBatch = {
  ...running,
  status: 'completed',
  output_file_id: OUTPUT_ID,
  error_file_id: ERRORS_ID,
  finalizing_at: NOW_S - 2,
  completed_at: NOW_S - 1,
  request_counts: { total: 10, completed: 9, failed: 1 },
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });
const notFound = { type: 'about:blank', title: 'Not found', status: 404, code: 'BATCH_NOT_FOUND' };
const FILES: Record<string, string> = { [OUTPUT_ID]: '{"custom_id":"r1"}\n{"custom_id":"r2"}\n', [ERRORS_ID]: '{"custom_id":"r3"}\n' };

const cancelling: BulkBatch = { ...running, status: 'cancelling', cancelling_at: NOW_S };

/**
 * The page over a stubbed API: `answers` replies to the batch's GETs in turn (the last one again after); a cancel
 * answers `onCancel`, by default the batch cancelling, as its GETs then do. Returns the calls made.
 */
function renderPage(principal: Principal, answers: Array<() => Response>, onCancel?: () => Response) {
  const calls: Array<{ method: string; path: string }> = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const path = url.split('?')[0]!;
      const method = init?.method ?? 'GET';
      calls.push({ method, path });
      if (path === '/v1/me') return json(200, principal);
      if (path === `/v1/batches/${BATCH_ID}` && method === 'GET') return (answers.length > 1 ? answers.shift()! : answers[0]!)();
      if (path === `/v1/batches/${BATCH_ID}/cancel` && method === 'POST') {
        if (onCancel) return onCancel();
        answers.splice(0, answers.length, () => json(200, cancelling));
        return json(200, cancelling);
      }
      const file = /^\/v1\/files\/(.+)\/content$/.exec(path)?.[1];
      if (file && FILES[file]) return new Response(FILES[file], { headers: { 'content-type': 'application/jsonl' } });
      return json(404, notFound);
    }),
  );
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[`/batches/${BATCH_ID}`]}>
        <Routes>
          <Route path="/batches/:id" element={<BatchDetailPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { calls, batchGets: () => calls.filter((c) => c.method === 'GET' && c.path === `/v1/batches/${BATCH_ID}`).length };
}

const writer: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: ['jobs:read', 'jobs:write'], admin: false, weight: 1 };
const reader: Principal = { ...writer, scopes: ['jobs:read'] };

const figure = (label: string) => within(screen.getByLabelText('Request counts')).getByText(label).nextElementSibling?.textContent;
const status = () => screen.findByRole('status', { name: 'Batch status' });

beforeEach(() => {
  // The rate and time left are measured to now: a fixed now makes them exact.
  vi.spyOn(Date, 'now').mockReturnValue(NOW_S * 1000);
});

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
  vi.mocked(saveBlob).mockClear();
});

describe('BatchDetailPage', () => {
  it('shows a running batch’s progress, counts, rate and time left, its timeline and metadata, and links to its jobs', async () => {
    renderPage(reader, [() => json(200, running)]);
    expect((await status()).textContent).toBe('in_progress');
    const bar = screen.getByRole('meter', { name: 'Batch progress' });
    expect([bar.getAttribute('aria-valuenow'), bar.getAttribute('aria-valuemax'), bar.getAttribute('aria-valuetext')]).toEqual(['5', '10', '5 of 10 (50.0%)']);
    expect(['Total', 'Completed', 'Failed', 'Remaining'].map(figure)).toEqual(['10', '4', '1', '5']);
    // 5 requests in the 10 s since it began running: 0.5/s, so the 5 left take 10 s.
    expect(figure('Rate')).toBe('0.5 requests/s');
    expect(figure('Time left')).toBe('10.00 s');
    const timeline = within(screen.getByLabelText('Batch timeline'));
    expect(timeline.getByText('In progress').nextElementSibling?.textContent).toBe('10 s ago');
    expect(timeline.getByText('Expires').nextElementSibling?.textContent).toBe('in 23 h');
    expect(screen.getByText('nightly').previousElementSibling?.textContent).toBe('run');
    expect(screen.getByText(INPUT_ID)).toBeTruthy();
    expect(screen.getByRole('link', { name: 'Jobs of this batch' }).getAttribute('href')).toBe(`/jobs?batch=${BATCH_ID}`);
    expect(screen.queryByRole('button', { name: /^Download/ })).toBeNull();
  });

  it('cancels after a confirmation, shows the batch cancelling, and can be backed out of', async () => {
    const { calls } = renderPage(writer, [() => json(200, running)]);
    await status();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel batch' }));
    let dialog = screen.getByRole('alertdialog', { name: 'Cancel this batch?' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Keep running' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(calls.some((c) => c.method === 'POST')).toBe(false);

    fireEvent.click(screen.getByRole('button', { name: 'Cancel batch' }));
    dialog = screen.getByRole('alertdialog', { name: 'Cancel this batch?' });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cancel batch' }));
    await waitFor(() => expect(screen.getByRole('status', { name: 'Batch status' }).textContent).toBe('cancelling'));
    expect(calls.filter((c) => c.method === 'POST')).toEqual([{ method: 'POST', path: `/v1/batches/${BATCH_ID}/cancel` }]);
    expect(screen.queryByRole('alertdialog')).toBeNull();
    // Asked once is enough: the button goes while it stops.
    expect(screen.queryByRole('button', { name: 'Cancel batch' })).toBeNull();
  });

  it('shows the server’s refusal of a cancel', async () => {
    const refused = { type: 'about:blank', title: 'The batch cannot be cancelled', status: 409, code: 'BATCH_NOT_CANCELABLE' };
    renderPage(writer, [() => json(200, running)], () => json(409, refused));
    await status();
    fireEvent.click(screen.getByRole('button', { name: 'Cancel batch' }));
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Cancel batch' }));
    expect((await screen.findByRole('alert')).textContent).toContain('BATCH_NOT_CANCELABLE');
  });

  it('offers no cancel once the batch has ended, nor to a key without jobs:write', async () => {
    renderPage(writer, [() => json(200, completed)]);
    expect((await status()).textContent).toBe('completed');
    expect(screen.queryByRole('button', { name: 'Cancel batch' })).toBeNull();
    cleanup();
    renderPage(reader, [() => json(200, running)]);
    expect((await status()).textContent).toBe('in_progress');
    expect(screen.queryByRole('button', { name: 'Cancel batch' })).toBeNull();
  });

  it('downloads the output and the error file, named after the batch', async () => {
    const { calls } = renderPage(reader, [() => json(200, completed)]);
    await status();
    // Ended: the rate is measured to its end (9 s), and nothing is left.
    expect(figure('Rate')).toBe('1.11 requests/s');
    expect(figure('Time left')).toBe('—');
    fireEvent.click(screen.getByRole('button', { name: 'Download output' }));
    await waitFor(() => expect(saveBlob).toHaveBeenCalledTimes(1));
    fireEvent.click(screen.getByRole('button', { name: 'Download errors' }));
    await waitFor(() => expect(saveBlob).toHaveBeenCalledTimes(2));
    const saved = await Promise.all(vi.mocked(saveBlob).mock.calls.map(async ([blob, name]) => [name, await blob.text()]));
    expect(saved).toEqual([
      [`${BATCH_ID}-output.jsonl`, FILES[OUTPUT_ID]],
      [`${BATCH_ID}-errors.jsonl`, FILES[ERRORS_ID]],
    ]);
    const fileCalls = calls.filter((c) => c.path.startsWith('/v1/files/')).map((c) => c.path);
    expect(fileCalls).toEqual([`/v1/files/${OUTPUT_ID}/content`, `/v1/files/${ERRORS_ID}/content`]);
  });

  it('lists the lines that made the input file fail, with no jobs to link to', async () => {
    const errors = [
      { code: 'invalid_json_line', message: 'Line 2 is not JSON', param: null, line: 2 },
      { code: 'mismatched_endpoint', message: 'The url must be /v1/jobs', param: 'url', line: 3 },
    ];
    const failed: BulkBatch = { ...running, status: 'failed', in_progress_at: null, failed_at: NOW_S - 11, errors: { object: 'list', data: errors } };
    renderPage(writer, [() => json(200, failed)]);
    expect((await status()).textContent).toBe('failed');
    const rows = within(screen.getByRole('table', { name: 'File validation errors' }))
      .getAllByRole('row')
      .slice(1);
    expect(rows.map((row) => [...row.querySelectorAll('td')].map((td) => td.textContent))).toEqual([
      ['2', 'invalid_json_line', 'Line 2 is not JSON'],
      ['3', 'mismatched_endpoint', 'The url must be /v1/jobs'],
    ]);
    expect(screen.queryByRole('link', { name: 'Jobs of this batch' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Cancel batch' })).toBeNull();
    expect(figure('Rate')).toBe('not known yet');
  });

  it('polls until the batch has ended, then stops', async () => {
    const { batchGets } = renderPage(reader, [() => json(200, running), () => json(200, completed)]);
    expect((await status()).textContent).toBe('in_progress');
    await waitFor(() => expect(screen.getByRole('status', { name: 'Batch status' }).textContent).toBe('completed'), { timeout: 4000 });
    const gets = batchGets();
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(batchGets()).toBe(gets);
  });

  it('says when the batch does not exist', async () => {
    renderPage(reader, [() => json(404, notFound)]);
    expect(await screen.findByText('Batch not found')).toBeTruthy();
  });
});
