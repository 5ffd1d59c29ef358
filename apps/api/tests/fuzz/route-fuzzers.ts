// One request generator per route the API serves. The fuzz test looks every
// registered route up here, so a route added without a generator fails it.
// The table and the small generators are here; the bigger ones are in
// job-, model- and inference-route-fuzzers.ts.
import fc from 'fast-check';
import { JOB_STATUSES, PRIORITIES, SCOPES } from '@inferq/contracts';
import { badNumber, fakeId, headerValue, hostileString, pathSegment, toJsonText } from './hostile-values.ts';
import { modelUpload } from './model-uploads.ts';
import { cursorParam, dateParam, enumParam, intParam, query } from './query-params.ts';
import { adminOnly, get, JSON_TYPE, noInput, strayBody, type FuzzWorld, type Gen } from './route-helpers.ts';
import { bulkAction, byId, createUpload, jobEvents, submitJob, tensorRoute } from './job-route-fuzzers.ts';
import { patchModelSettings, pauseOrResume, putRouting, retentionBody, retireModel } from './model-route-fuzzers.ts';
import { embeddings, v2Infer, v2ModelGet } from './inference-route-fuzzers.ts';
import { BATCH_ROUTE_FUZZERS } from './batch-route-fuzzers.ts';
import type { FuzzCase } from './fuzz-case.ts';

export type { FuzzCase, FuzzWorld };

/** POST /v1/keys bodies: valid ones (a new non-admin key) and ones with one bad field. */
const keyBody = fc.oneof(
  fc
    .record({
      name: fc.string({ unit: 'binary', minLength: 1, maxLength: 100 }).filter((s) => !s.includes('\u0000')),
      scopes: fc.option(fc.uniqueArray(fc.constantFrom(...SCOPES.filter((s) => s !== 'admin'))), { nil: undefined }),
      weight: fc.option(fc.oneof(fc.constantFrom(1, 1000), fc.integer({ min: 1, max: 1000 })), { nil: undefined }),
    })
    .map((b) => ({ payload: JSON.stringify(b), ok: true })),
  fc
    .oneof(
      fc.constantFrom<unknown>('', 'x'.repeat(101), '\u0000', 'a\u0000', '\ud800', 'x\udfff', {}, [], null).map((name) => ({ name })),
      fc
        .oneof(fc.constantFrom<unknown>(['root'], 'admin', ['jobs:read', 'jobs:read'], null, [1], {}), fc.array(hostileString, { minLength: 1, maxLength: 3 }))
        .map((scopes) => ({ name: 'k', scopes })),
      fc.oneof(badNumber, fc.constantFrom<unknown>(0, 10_000_001, 'x')).map((rateLimitPerMin) => ({ name: 'k', rateLimitPerMin })),
      fc.oneof(badNumber, fc.constantFrom<unknown>(0, 1001, 'x', '0', null)).map((weight) => ({ name: 'k', weight })),
    )
    .map((b) => ({ payload: toJsonText(b), ok: false })),
  fc.constantFrom('{', '[]', 'null', '{"name":"x","extra":1}', '{"name":"x","__proto__":{"admin":true}}').map((payload) => ({ payload, ok: false })),
);

/** The generator of each route, keyed `METHOD url` as Fastify registers it; HEAD routes reuse their GET's. */
export const ROUTE_FUZZERS: Record<string, Gen> = {
  'POST /v1/jobs': submitJob,
  'POST /v1/uploads': createUpload,
  'GET /v1/jobs/:id': byId('GET', '', query({ encoding: enumParam(['json', 'base64']) }, true)),
  'GET /v1/jobs': () =>
    query(
      {
        status: enumParam(JOB_STATUSES),
        priority: enumParam(PRIORITIES),
        model: { ok: hostileString, bad: fc.constant('m'.repeat(201)) },
        createdAfter: dateParam,
        createdBefore: dateParam,
        limit: intParam(1, 500),
        cursor: cursorParam,
      },
      false,
    ).map(({ qs, refused }) => get(`/v1/jobs${qs}`, refused ? 'reject' : 'any', 'list')),
  'POST /v1/jobs/:id/cancel': byId('POST', '/cancel'),
  // Own jobs may be deleted (then the other routes answer 410 for them: still a 4xx they may get).
  'DELETE /v1/jobs/:id': byId('DELETE', ''),
  'PATCH /v1/models/:name': patchModelSettings,
  'PATCH /v1/keys/:id': adminOnly(() =>
    fc.tuple(pathSegment(fakeId), retentionBody).map(([id, body]) => ({
      method: 'PATCH',
      url: `/v1/keys/${id}`,
      headers: JSON_TYPE,
      payload: body.payload,
      expect: 'reject' as const,
      label: `update unknown key, ${body.ok ? 'valid' : 'bad'} body`,
    })),
  ),
  'POST /v1/jobs/:id/retry': byId('POST', '/retry'),
  'POST /v1/jobs/bulk-cancel': bulkAction('cancel'),
  'POST /v1/jobs/bulk-retry': bulkAction('retry'),
  'GET /v1/jobs/:id/inputs/:index': tensorRoute('inputs'),
  'GET /v1/jobs/:id/outputs/:index': tensorRoute('outputs'),
  'GET /v1/jobs/:id/webhook-deliveries': byId('GET', '/webhook-deliveries'),
  'GET /v1/jobs/:id/events': jobEvents,
  'POST /v1/models': (w) =>
    modelUpload(w.modelBytes, fc.constantFrom('fuzz-model', 'fuzz.model_2', w.otherModelName)).map((u): FuzzCase => ({
      method: 'POST',
      url: '/v1/models',
      headers: { 'content-type': u.contentType },
      payload: u.payload,
      expect: u.expect,
      as: 'fuzzer',
      label: u.label,
    })),
  'GET /v1/models': noInput('/v1/models'),
  'GET /v1/models/:name': (w) =>
    fc.oneof(
      fc.constantFrom('mlp', 'transformer', w.otherModelName).map((name) => get(`/v1/models/${name}`, 'accept', 'registered model')),
      pathSegment(hostileString).map((name) => get(`/v1/models/${name}`, 'reject', 'hostile name')),
    ),
  'GET /v1/models/:name/routing': (w) =>
    fc.oneof(
      fc.constantFrom('mlp', 'transformer', w.otherModelName).map((name) => get(`/v1/models/${name}/routing`, 'accept', 'registered model')),
      fc
        .oneof(fc.constantFrom('nope', 'mlp:1'), pathSegment(hostileString))
        .map((name) => get(`/v1/models/${name}/routing`, 'reject', 'unknown or hostile name')),
    ),
  'PUT /v1/models/:name/routing': putRouting,
  'DELETE /v1/models/:name': retireModel,
  'POST /v1/models/:name/pause': pauseOrResume('pause'),
  'POST /v1/models/:name/resume': pauseOrResume('resume'),
  'GET /v1/models/:name/versions': (w) =>
    fc.oneof(
      fc.constantFrom('mlp', 'transformer', w.otherModelName).map((name) => get(`/v1/models/${name}/versions`, 'accept', 'registered model')),
      fc
        .oneof(fc.constantFrom('nope', 'mlp:1'), pathSegment(hostileString))
        .map((name) => get(`/v1/models/${name}/versions`, 'reject', 'unknown or hostile name')),
    ),
  'POST /v1/embeddings': embeddings,
  ...BATCH_ROUTE_FUZZERS,
  'POST /v1/keys': adminOnly(() =>
    keyBody.map(({ payload, ok }) => ({ method: 'POST', url: '/v1/keys', headers: JSON_TYPE, payload, expect: ok ? 'accept' : 'reject', label: 'create key' })),
  ),
  'GET /v1/keys': adminOnly(noInput('/v1/keys')),
  'POST /v1/keys/:id/revoke': adminOnly(() =>
    fc.tuple(pathSegment(fakeId), strayBody).map(([id, body]) => ({
      method: 'POST',
      url: `/v1/keys/${id}/revoke`,
      headers: body.headers,
      payload: body.payload,
      expect: 'reject' as const,
      label: 'revoke unknown key',
    })),
  ),
  'GET /v1/audit': adminOnly(() =>
    query({ limit: intParam(1, 500), cursor: cursorParam }, false).map(({ qs, refused }) => ({
      method: 'GET',
      url: `/v1/audit${qs}`,
      headers: {},
      expect: refused ? ('reject' as const) : ('any' as const),
      label: 'audit',
    })),
  ),
  'GET /v1/inference-batches/:id': adminOnly(() =>
    pathSegment(fakeId).map((id) => ({ method: 'GET', url: `/v1/inference-batches/${id}`, headers: {}, expect: 'reject' as const, label: 'unknown batch' })),
  ),
  // A range may be empty or backwards (400): the server decides, never with a 5xx.
  'GET /v1/usage': () =>
    query({ from: dateParam, to: dateParam, groupBy: enumParam(['key', 'model']) }, false).map(({ qs, refused }) =>
      get(`/v1/usage${qs}`, refused ? 'reject' : 'any', 'usage'),
    ),
  'GET /v1/webhooks/secret': noInput('/v1/webhooks/secret'),
  'GET /v1/me': noInput('/v1/me'),
  'GET /v1/stats': () =>
    query({ windowMinutes: intParam(1, 1440) }, false).map(({ qs, refused }) => get(`/v1/stats${qs}`, refused ? 'reject' : 'accept', 'stats')),
  'GET /v1/workers': noInput('/v1/workers'),
  'GET /v2/health/live': noInput('/v2/health/live'),
  'GET /v2/health/ready': noInput('/v2/health/ready'),
  'GET /v2': noInput('/v2'),
  'GET /v2/models/:name': v2ModelGet('', false, false),
  'GET /v2/models/:name/versions/:version': v2ModelGet('', false, true),
  'GET /v2/models/:name/ready': v2ModelGet('/ready', true, false),
  'GET /v2/models/:name/versions/:version/ready': v2ModelGet('/ready', true, true),
  'POST /v2/models/:name/infer': v2Infer(false),
  'POST /v2/models/:name/versions/:version/infer': v2Infer(true),
  'GET /healthz': noInput('/healthz'),
  'GET /readyz': noInput('/readyz'),
  'GET /metrics': noInput('/metrics'),
  'GET /docs': noInput('/docs'),
  'GET /docs/json': noInput('/docs/json'),
  'GET /docs/yaml': noInput('/docs/yaml'),
  'GET /docs/static/index.html': noInput('/docs/static/index.html'),
  'GET /docs/static/swagger-initializer.js': noInput('/docs/static/swagger-initializer.js'),
  'GET /docs/static/*': () =>
    fc.oneof(
      fc.constantFrom('index.css', 'swagger-ui.css', 'favicon-32x32.png', 'logo.svg').map((file) => get(`/docs/static/${file}`, 'any', 'static file')),
      fc
        .constantFrom(
          '../../../../package.json',
          '..%2f..%2f..%2fpackage.json',
          '%2e%2e/%2e%2e/package.json',
          '....//....//package.json',
          '.%00./package.json',
          'index.css%00.png',
          '/etc/passwd',
          '..\\..\\package.json',
          'nope.js',
          '',
        )
        .map((path) => get(`/docs/static/${path}`, path === '' ? 'any' : 'reject', 'static traversal')),
    ),
  'HEAD /docs/': (w) => noInput('/docs/')(w).map((c) => ({ ...c, method: 'HEAD' })),
};

/** Requests to no route at all: unknown paths and methods. */
export const unroutedRequest: fc.Arbitrary<FuzzCase> = fc
  .tuple(
    fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'),
    fc.oneof(
      fc.constantFrom('/v2/models', '/v1', '/v1/', '/v1/jobs/x/y/z', '/v1/models/mlp/versionz', '/admin', '/.env', '/v1/keys/x', '//v1/jobs'),
      pathSegment(hostileString).map((s) => `/v1/${s}/x`),
    ),
  )
  .map(([method, url]) => ({ method, url, headers: {}, expect: 'reject', as: 'fuzzer', label: 'no route' }));

/** Authorization headers that must not authenticate. */
export const badAuthorization = (w: FuzzWorld): fc.Arbitrary<Record<string, string>> =>
  fc.oneof(
    fc.constant({}),
    fc
      .constantFrom(
        '',
        'Bearer',
        'Bearer ',
        `bearer ${w.fuzzKey}`,
        `Basic ${w.fuzzKey}`,
        `Bearer ${w.fuzzKey}x`,
        `Bearer ${w.fuzzKey.slice(0, -1)}`,
        `Bearer ${w.fuzzKey.slice(0, 16)}${'A'.repeat(w.fuzzKey.length - 16)}`,
        "Bearer ' OR 1=1--",
        `Bearer ${'x'.repeat(8_000)}`,
      )
      .map((authorization) => ({ authorization })),
    headerValue.map((v) => ({ authorization: `Bearer ${v}` })),
    headerValue.map((v) => ({ 'x-api-key': v })),
  );

/** Headers that change nothing about the answer but must not break it. */
export const noiseHeaders: fc.Arbitrary<Record<string, string>> = fc.record(
  {
    'x-request-id': headerValue,
    accept: fc.constantFrom('application/xml', '*/*', 'text/html', '', 'application/problem+json;q=0'),
    'x-forwarded-for': fc.constantFrom('127.0.0.1', '::1', "' OR 1=1", '1.1.1.1, 2.2.2.2'),
    'accept-encoding': fc.constantFrom('gzip', 'br', 'identity;q=0', 'x'),
  },
  { requiredKeys: [] },
);
