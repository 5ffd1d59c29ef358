// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { InferqError } from '@inferq/sdk';
import { clearApiKey, setApiKey } from '../auth/key-storage.ts';
import { errorSummary, fieldErrors, isUnauthenticated } from './api-error.ts';
import { inferq } from './sdk-client.ts';
import { downloadTensor } from './tensor-download.ts';

const problem = {
  type: 'about:blank',
  title: 'The request is not valid',
  status: 400,
  code: 'VALIDATION_FAILED',
  detail: 'name: must match pattern',
  errors: [{ pointer: '/body/name', code: 'pattern', detail: 'must match pattern' }],
};
const json = (status: number, body: unknown) => new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json' } });

afterEach(() => {
  vi.unstubAllGlobals();
  localStorage.clear();
});

describe('console error helpers over InferqError', () => {
  it('shows the problem title, detail and code, and field errors by pointer', () => {
    const err = new InferqError(problem);
    expect(errorSummary(err)).toEqual({ title: problem.title, detail: problem.detail, code: 'VALIDATION_FAILED' });
    expect(fieldErrors(err, '/body')).toEqual({ name: 'must match pattern' });
    expect(isUnauthenticated(err)).toBe(false);
    expect(isUnauthenticated(new InferqError({ ...problem, status: 401, code: 'UNAUTHENTICATED' }))).toBe(true);
  });

  it('says what to check when the API cannot be reached', async () => {
    vi.stubGlobal(
      'fetch',
      vi.fn(async () => Promise.reject(new TypeError('Failed to fetch'))),
    );
    const err = await inferq()
      .workers()
      .catch((e: unknown) => e);
    expect(errorSummary(err)).toEqual({ title: 'Cannot reach the API', detail: 'Check that the inferq API is running and reachable.', code: 'NETWORK_ERROR' });
  });
});

describe('the session client and the tensor download', () => {
  it('sends the signed-in key, following sign-in and sign-out', async () => {
    const fetchMock = vi.fn(async () => json(200, { items: [] }));
    vi.stubGlobal('fetch', fetchMock);
    setApiKey('iq_first');
    await inferq().workers();
    setApiKey('iq_second');
    await inferq().workers();
    const sent = fetchMock.mock.calls.map((call) => new Headers((call as unknown as [string, RequestInit])[1].headers).get('authorization'));
    expect(sent).toEqual(['Bearer iq_first', 'Bearer iq_second']);
    expect((fetchMock.mock.calls[0] as unknown as [string])[0]).toBe('/v1/workers');
    clearApiKey('signed-out');
  });

  it('downloads bytes with the key, and fails with the problem as InferqError', async () => {
    setApiKey('iq_key');
    const fetchMock = vi.fn(async () => new Response(new Uint8Array([1, 2, 3])));
    vi.stubGlobal('fetch', fetchMock);
    expect(new Uint8Array(await (await downloadTensor('/v1/jobs/j/outputs/0')).arrayBuffer())).toEqual(new Uint8Array([1, 2, 3]));
    expect(new Headers((fetchMock.mock.calls[0] as unknown as [string, RequestInit])[1].headers).get('authorization')).toBe('Bearer iq_key');

    vi.stubGlobal(
      'fetch',
      vi.fn(async () => json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'JOB_NOT_FOUND' })),
    );
    const err = await downloadTensor('/v1/jobs/j/outputs/0').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InferqError);
    expect(errorSummary(err)).toMatchObject({ title: 'Not found', code: 'JOB_NOT_FOUND' });
  });
});
