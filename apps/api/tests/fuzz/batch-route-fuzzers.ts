// The Batch API's routes (POST /v1/files, /v1/batches): no file or batch exists for the fuzzing key, so every
// request naming one is refused; lists answer; a create names files that are not there, or bodies that are wrong.
import fc from 'fast-check';
import { FILE_PURPOSES } from '@inferq/contracts';
import { fakeId, hostileString, pathSegment, toJsonText } from './hostile-values.ts';
import { enumParam, intParam, query } from './query-params.ts';
import { get, JSON_TYPE, strayBody, type Gen } from './route-helpers.ts';
import type { FuzzCase } from './fuzz-case.ts';

const hex32 = fc.stringMatching(/^[0-9a-f]{32}$/);
const fileId = fc.oneof(
  hex32.map((h) => `file-${h}`),
  fakeId,
  hostileString,
);
const batchId = fc.oneof(
  hex32.map((h) => `batch_${h}`),
  fakeId,
  hostileString,
);

const list =
  (path: string, id: fc.Arbitrary<string>, extra = {}): Gen =>
  () =>
    query({ after: { ok: id.filter((v) => /^(file-|batch_)[0-9a-f]{32}$/.test(v)), bad: fc.constant('x') }, limit: intParam(1, 100), ...extra }, false).map(
      ({ qs, refused }) => get(`${path}${qs}`, refused ? 'reject' : 'any', 'list'),
    );

const decoded = (v: string): string => {
  try {
    return decodeURIComponent(v);
  } catch {
    return v;
  }
};

/** A request naming a file or batch the fuzzing key does not have: refused, whatever else it carries. */
const unknown =
  (method: 'GET' | 'POST' | 'DELETE', path: (id: string) => string, id: fc.Arbitrary<string>): Gen =>
  () =>
    fc.tuple(pathSegment(id), strayBody).map(([v, body]): FuzzCase => {
      // A UUID at GET /v1/batches/:id is an inference batch's old path: a redirect, not a refusal.
      const redirect = method === 'GET' && path('x') === '/v1/batches/x' && /^[0-9a-f-]{36}$/i.test(decoded(v));
      return {
        method,
        url: path(v),
        headers: method === 'GET' ? {} : body.headers,
        payload: method === 'GET' ? undefined : body.payload,
        expect: redirect ? 'any' : 'reject',
        as: 'fuzzer',
        label: 'unknown file or batch',
      };
    });

const createBatch: Gen = () =>
  fc
    .record({
      input_file_id: fc.oneof(fileId, fc.constant(undefined)),
      endpoint: fc.oneof(fc.constantFrom('/v1/jobs', '/v1/embeddings', '/v1/chat/completions'), hostileString),
      completion_window: fc.oneof(fc.constantFrom('24h', '1h', '0h', '169h', '1d'), hostileString),
      metadata: fc.option(fc.dictionary(hostileString, hostileString, { maxKeys: 3 }), { nil: undefined }),
    })
    .map((b): FuzzCase => ({
      method: 'POST',
      url: '/v1/batches',
      headers: JSON_TYPE,
      payload: toJsonText(b),
      expect: 'reject',
      as: 'fuzzer',
      label: 'create batch',
    }));

export const BATCH_ROUTE_FUZZERS: Record<string, Gen> = {
  // Never multipart here: a JSON body, broken JSON or none at all.
  'POST /v1/files': () =>
    strayBody.map((b): FuzzCase => ({
      method: 'POST',
      url: '/v1/files',
      headers: b.headers,
      payload: b.payload,
      expect: 'reject',
      as: 'fuzzer',
      label: 'no form',
    })),
  'GET /v1/files': list('/v1/files', fileId, { purpose: enumParam(FILE_PURPOSES) }),
  'GET /v1/files/:id': unknown('GET', (id) => `/v1/files/${id}`, fileId),
  'GET /v1/files/:id/content': unknown('GET', (id) => `/v1/files/${id}/content`, fileId),
  'DELETE /v1/files/:id': unknown('DELETE', (id) => `/v1/files/${id}`, fileId),
  'POST /v1/batches': createBatch,
  'GET /v1/batches': list('/v1/batches', batchId),
  'GET /v1/batches/:id': unknown('GET', (id) => `/v1/batches/${id}`, batchId),
  'POST /v1/batches/:id/cancel': unknown('POST', (id) => `/v1/batches/${id}/cancel`, batchId),
};
