// @vitest-environment happy-dom
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import { getApiKey } from '../auth/key-storage.ts';
import { SignInPage } from './sign-in-page.tsx';

const problem = {
  type: 'about:blank',
  title: 'A valid API key is required',
  status: 401,
  code: 'UNAUTHENTICATED',
  detail: 'the API key is not valid or was revoked',
};
const principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: ['jobs:read'], admin: false };

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

function renderSignIn() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={['/sign-in']}>
        <Routes>
          <Route path="/sign-in" element={<SignInPage />} />
          <Route path="/" element={<h1>Overview</h1>} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const signInWith = (key: string) => {
  fireEvent.change(screen.getByLabelText('API key'), { target: { value: key } });
  fireEvent.click(screen.getByRole('button', { name: 'Sign in' }));
};

beforeEach(() => localStorage.clear());
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('SignInPage', () => {
  it('says clearly when the key is rejected, and keeps nothing', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => json(401, problem)),
    );
    renderSignIn();
    signInWith('iq_bad_key');
    expect(await screen.findByText('This API key is not valid or was revoked.')).toBeTruthy();
    expect(screen.getByLabelText('API key').getAttribute('aria-invalid')).toBe('true');
    expect(getApiKey()).toBeNull();
  });

  it('checks the key with /v1/me, keeps it and opens the console', async () => {
    const fetchMock = vi.fn(async () => json(200, principal));
    vi.stubGlobal('fetch', fetchMock);
    renderSignIn();
    signInWith('iq_good_key');
    expect(await screen.findByRole('heading', { name: 'Overview' })).toBeTruthy();
    expect(getApiKey()).toBe('iq_good_key');
    const [url, init] = fetchMock.mock.calls[0] as unknown as [string, RequestInit];
    expect(url).toBe('/v1/me');
    expect(new Headers(init.headers).get('authorization')).toBe('Bearer iq_good_key');
  });
});
