// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { Principal, Usage } from '@inferq/contracts';
import { UsagePage } from './usage-page.tsx';

const KEY_A = '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f';
const KEY_B = '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e70';
const TO = '2025-06-02T09:30:00.000Z';

// Out of order on purpose: the table sorts by device time itself.
const byKey: Usage = {
  from: '2025-06-01T09:30:00.000Z',
  to: TO,
  groupBy: 'key',
  items: [
    { keyId: KEY_B, keyName: 'batch-export', jobs: 10, items: 40, deviceMs: 1_500 },
    { keyId: KEY_A, keyName: 'checkout-service', jobs: 1_200, items: 1_450, deviceMs: 4_500 },
  ],
  total: { jobs: 1_210, items: 1_490, deviceMs: 6_000 },
};
const byModel: Usage = {
  from: '2025-06-01T09:30:00.000Z',
  to: TO,
  groupBy: 'model',
  items: [
    { model: 'mlp', modelVersion: 2, jobs: 1_000, items: 1_000, deviceMs: 5_400_000 },
    { model: 'cnn', modelVersion: 1, jobs: 210, items: 490, deviceMs: 1_800_000 },
  ],
  total: { jobs: 1_210, items: 1_490, deviceMs: 7_200_000 },
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** The API as the page sees it; returns the query strings of the usage requests. */
function stubApi(principal: Principal, answers: { key: Usage; model: Usage }) {
  const queries: URLSearchParams[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string) => {
      const [path, search] = url.split('?');
      if (path === '/v1/me') return json(200, principal);
      if (path === '/v1/usage') {
        const query = new URLSearchParams(search);
        queries.push(query);
        return json(200, query.get('groupBy') === 'model' ? answers.model : answers.key);
      }
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  return { queries };
}

function renderPage(entry = '/usage') {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[entry]}>
        <Routes>
          <Route path="/usage" element={<UsagePage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const admin: Principal = { keyId: KEY_A, scopes: [], admin: true, weight: 1 };
const reader: Principal = { keyId: KEY_A, scopes: ['jobs:read'], admin: false, weight: 1 };

const bodyRows = (table: HTMLElement) => within(table).getAllByRole('row').slice(1, -1) as HTMLTableRowElement[];
const footer = (table: HTMLElement) => within(table).getAllByRole('row').at(-1) as HTMLTableRowElement;
const share = (name: string) => screen.getByRole('meter', { name: `Share of ${name}` }).getAttribute('aria-valuetext');

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('UsagePage', () => {
  it('lists keys by device time, largest first, with their share and a totals row; the last 24 hours by default', async () => {
    const now = Date.now();
    const { queries } = stubApi(admin, { key: byKey, model: byModel });
    renderPage();
    const table = await screen.findByRole('table', { name: 'Device time' });
    expect(bodyRows(table).map((r) => r.cells[0]?.textContent)).toEqual([`checkout-service${KEY_A}`, `batch-export${KEY_B}`]);
    expect(share('checkout-service')).toBe('75.0%');
    expect(share('batch-export')).toBe('25.0%');
    expect(Array.from(footer(table).cells, (c) => c.textContent)).toEqual(['Total', (1_210).toLocaleString(), (1_490).toLocaleString(), '6.00 s', '100.0%']);
    expect(within(table).getByRole('columnheader', { name: 'API key' })).toBeTruthy();
    expect(await screen.findByText(/every API key/)).toBeTruthy();

    expect(queries[0]?.get('groupBy')).toBe('key');
    const fromMs = Date.parse(queries[0]!.get('from')!);
    expect(Math.abs(now - 86_400_000 - fromMs)).toBeLessThan(60_000);
  });

  it('switches to model versions, with device time in hours, and asks for a wider range', async () => {
    const { queries } = stubApi(admin, { key: byKey, model: byModel });
    renderPage();
    await screen.findByRole('table', { name: 'Device time' });
    fireEvent.change(screen.getByLabelText('Group by'), { target: { value: 'model' } });
    expect(await screen.findByRole('columnheader', { name: 'Model' })).toBeTruthy();
    const table = screen.getByRole('table', { name: 'Device time' });
    expect(bodyRows(table).map((r) => [r.cells[0]?.textContent, r.cells[3]?.textContent])).toEqual([
      ['mlp:2', '1.5 h'],
      ['cnn:1', '30.0 min'],
    ]);
    expect(share('mlp:2')).toBe('75.0%');
    expect(footer(table).cells[3]?.textContent).toBe('2.0 h');
    expect(queries.at(-1)?.get('groupBy')).toBe('model');

    const now = Date.now();
    fireEvent.change(screen.getByLabelText('Time range'), { target: { value: '30d' } });
    await vi.waitFor(() => expect(queries).toHaveLength(3));
    expect(queries[2]?.get('groupBy')).toBe('model');
    expect(Math.abs(now - 30 * 86_400_000 - Date.parse(queries[2]!.get('from')!))).toBeLessThan(60_000);
  });

  it('opens on the view named in the URL, says a non-admin key sees its own jobs, and says when nothing ran', async () => {
    const empty: Usage = { ...byModel, items: [], total: { jobs: 0, items: 0, deviceMs: 0 } };
    const { queries } = stubApi(reader, { key: byKey, model: empty });
    renderPage('/usage?range=7d&groupBy=model');
    expect(await screen.findByText('No device time in this range')).toBeTruthy();
    expect(await screen.findByText(/jobs of this API key only/)).toBeTruthy();
    expect((screen.getByLabelText('Time range') as HTMLSelectElement).value).toBe('7d');
    expect(queries[0]?.get('groupBy')).toBe('model');
  });
});
