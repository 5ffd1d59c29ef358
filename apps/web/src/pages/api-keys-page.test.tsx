// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import type { ApiKey, Principal } from '@inferq/contracts';
import { ApiKeysPage } from './api-keys-page.tsx';

const ADMIN_ID = '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f';
const admin: Principal = { keyId: ADMIN_ID, scopes: ['admin'], admin: true, weight: 1 };
const adminKey: ApiKey = {
  id: ADMIN_ID,
  name: 'admin',
  prefix: 'Xk4pQ2mN8rTa',
  scopes: ['admin'],
  rateLimitPerMin: null,
  weight: 1,
  createdAt: '2025-06-01T08:00:00.000Z',
  revokedAt: null,
};
const batchKey: ApiKey = {
  ...adminKey,
  id: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e70',
  name: 'batch-export',
  prefix: 'Bq7wE3rT9yUi',
  scopes: ['jobs:read', 'jobs:write'],
  weight: 5,
};

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** The API as the page sees it; returns the bodies of the key creations. */
function stubApi(createAnswer: (body: Record<string, unknown>) => Response = (body) => json(201, { ...batchKey, ...body, secret: 'iq_Bq7wE3rT9yUi_secret' })) {
  const created: Record<string, unknown>[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (url === '/v1/me') return json(200, admin);
      if (url === '/v1/keys' && init?.method === 'POST') {
        const body = JSON.parse(String(init.body)) as Record<string, unknown>;
        created.push(body);
        return createAnswer(body);
      }
      if (url === '/v1/keys') return json(200, { items: [batchKey, adminKey] });
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  return { created };
}

function renderPage() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter>
        <ApiKeysPage />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const createWith = (name: string, weight?: string) => {
  fireEvent.change(screen.getByLabelText('Key name'), { target: { value: name } });
  if (weight !== undefined) fireEvent.change(screen.getByLabelText('Weight'), { target: { value: weight } });
  fireEvent.click(screen.getByRole('button', { name: 'Create key' }));
};

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ApiKeysPage', () => {
  it("shows each key's weight", async () => {
    stubApi();
    renderPage();
    const table = await screen.findByRole('table', { name: 'API keys' });
    const headers = within(table)
      .getAllByRole('columnheader')
      .map((h) => h.textContent);
    const weightColumn = headers.indexOf('Weight');
    expect(weightColumn).toBeGreaterThan(0);
    const rows = within(table).getAllByRole('row').slice(1) as HTMLTableRowElement[];
    expect(rows.map((r) => [r.cells[0]?.textContent, r.cells[weightColumn]?.textContent])).toEqual([
      ['batch-export', '5'],
      ['admin', '1'],
    ]);
  });

  it('creates a key with weight 1 unless another is typed, then resets the field', async () => {
    const { created } = stubApi();
    renderPage();
    expect((screen.getByLabelText('Weight') as HTMLInputElement).value).toBe('1');
    createWith('default-share');
    await screen.findByLabelText('New API key secret');
    createWith('batch-export', '5');
    await vi.waitFor(() => expect(created).toHaveLength(2));
    expect(created).toEqual([
      { name: 'default-share', scopes: ['jobs:read', 'jobs:write'], weight: 1 },
      { name: 'batch-export', scopes: ['jobs:read', 'jobs:write'], weight: 5 },
    ]);
    await vi.waitFor(() => expect((screen.getByLabelText('Weight') as HTMLInputElement).value).toBe('1'));
  });

  it('refuses a weight out of range or not whole before asking the API, and shows the API’s own refusal', async () => {
    const refusal = {
      type: 'about:blank',
      title: 'Validation failed',
      status: 400,
      code: 'VALIDATION_FAILED',
      errors: [{ pointer: '/body/weight', code: 'maximum', detail: 'must be <= 1000' }],
    };
    const { created } = stubApi(() => json(400, refusal));
    renderPage();
    for (const weight of ['0', '1001', '2.5', '']) {
      createWith('k', weight);
      expect(await screen.findByText('Enter a whole number from 1 to 1000.')).toBeTruthy();
      expect(screen.getByLabelText('Weight').getAttribute('aria-invalid')).toBe('true');
    }
    expect(created).toEqual([]);

    createWith('k', '7');
    expect(await screen.findByText('must be <= 1000')).toBeTruthy();
    expect(created).toEqual([{ name: 'k', scopes: ['jobs:read', 'jobs:write'], weight: 7 }]);
  });
});
