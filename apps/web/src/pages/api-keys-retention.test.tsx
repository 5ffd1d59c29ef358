// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter } from 'react-router';
import type { ApiKey, Principal } from '@inferq/contracts';
import { ApiKeysPage } from './api-keys-page.tsx';

const ADMIN_ID = '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f';
const admin: Principal = { keyId: ADMIN_ID, scopes: ['admin'], admin: true, weight: 1 };
const adminKey: ApiKey = {
  id: ADMIN_ID,
  name: 'root-admin',
  prefix: 'Xk4pQ2mN8rTa',
  scopes: ['admin'],
  rateLimitPerMin: null,
  weight: 1,
  retentionS: null,
  createdAt: '2025-06-01T08:00:00.000Z',
  revokedAt: null,
};
const tenant: ApiKey = { ...adminKey, id: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e70', name: 'tenant-x', scopes: ['jobs:read'], retentionS: 604_800 };

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

function stubApi() {
  const patches: Array<{ url: string; body: unknown }> = [];
  let keys = [tenant, adminKey];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      if (url === '/v1/me') return json(200, admin);
      if (url === '/v1/keys') return json(200, { items: keys });
      if (url === `/v1/keys/${tenant.id}` && init?.method === 'PATCH') {
        const body = JSON.parse(String(init.body)) as { retentionS: number | null };
        patches.push({ url, body });
        keys = [{ ...tenant, retentionS: body.retentionS }, adminKey];
        return json(200, keys[0]);
      }
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  return patches;
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

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const rowOf = async (name: string) => within((await screen.findByText(name, { selector: 'td span' })).closest('tr')!);

describe('API keys page: job retention', () => {
  it("shows each key's retention and sets it, refusing what is too short without asking the API", async () => {
    const patches = stubApi();
    renderPage();
    const retentionCell = (row: Awaited<ReturnType<typeof rowOf>>, name: string) =>
      row.getByRole('button', { name: `Change retention of ${name}` }).parentElement!.textContent;
    expect(retentionCell(await rowOf('root-admin'), 'root-admin')).toMatch(/^default/);
    const row = await rowOf('tenant-x');
    expect(row.getByText('7d')).toBeTruthy();

    fireEvent.click(row.getByRole('button', { name: 'Change retention of tenant-x' }));
    fireEvent.change(row.getByLabelText('Retention of tenant-x'), { target: { value: '30' } });
    fireEvent.click(row.getByRole('button', { name: 'Save' }));
    expect(row.getByRole('alert').textContent).toMatch(/at least 60 seconds/);
    expect(patches).toEqual([]);

    fireEvent.change(row.getByLabelText('Retention of tenant-x'), { target: { value: '12h' } });
    fireEvent.click(row.getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches).toEqual([{ url: `/v1/keys/${tenant.id}`, body: { retentionS: 43_200 } }]));
    expect(await (await rowOf('tenant-x')).findByText('12h')).toBeTruthy();

    // Empty goes back to the server's default.
    fireEvent.click((await rowOf('tenant-x')).getByRole('button', { name: 'Change retention of tenant-x' }));
    fireEvent.change((await rowOf('tenant-x')).getByLabelText('Retention of tenant-x'), { target: { value: '' } });
    fireEvent.click((await rowOf('tenant-x')).getByRole('button', { name: 'Save' }));
    await waitFor(() => expect(patches.at(-1)?.body).toEqual({ retentionS: null }));
  });
});
