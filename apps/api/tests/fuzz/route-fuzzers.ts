// One request generator per route the API serves. The fuzz test looks every
// registered route up here, so a route added without a generator fails it.
import fc from 'fast-check';
import { DATATYPES, isFixedSizeDataType, JOB_STATUSES, PRIORITIES, SCOPES, preferredWaitSeconds } from '@inferq/contracts';
import { badNumber, fakeId, headerValue, hostileDateTime, hostileString, pathSegment, percentEncode, queryValue, toJsonText } from './hostile-values.ts';
import { brokenJsonText, invalidJobBody, validJobBody } from './job-bodies.ts';
import { modelUpload } from './model-uploads.ts';
import { typedJobBody } from './typed-bodies.ts';
import { binaryInferCases } from './binary-framing-generators.ts';
import { framedSubmit, multipartSubmit } from './submit-body-forms.ts';
import type { FuzzCase } from './fuzz-case.ts';

export type { FuzzCase };

/** What the generators may aim at: data created before the fuzzing starts. */
export interface FuzzWorld {
  /** Jobs of the fuzzing key: reading or canceling them may succeed. */
  ownJobIds: string[];
  /** Jobs of another tenant: every route must answer as if they did not exist. */
  otherJobIds: string[];
  /** An Idempotency-Key the other tenant used. */
  otherIdempotencyKey: string;
  /** A model the other tenant registered (models are shared; its rows must not change). */
  otherModelName: string;
  /** The demo MLP's ONNX bytes. */
  modelBytes: Uint8Array;
  /** The fuzzing key's secret, for near-miss Authorization headers. */
  fuzzKey: string;
}

type Gen = (w: FuzzWorld) => fc.Arbitrary<FuzzCase>;

const JSON_TYPE = { 'content-type': 'application/json' };
const get = (url: string, expect: FuzzCase['expect'], label: string): FuzzCase => ({ method: 'GET', url, headers: {}, expect, as: 'fuzzer', label });

/** Ids for `:id`: the fuzzer's own (may succeed), another tenant's and made-up ones (must fail). */
const jobId = (w: FuzzWorld) =>
  fc.oneof(
    fc.constantFrom(...w.ownJobIds).map((id) => ({ segment: id, own: true })),
    fc.constantFrom(...w.otherJobIds).map((id) => ({ segment: id, own: false })),
    pathSegment(fakeId).map((segment) => ({ segment, own: false })),
  );

/** A query parameter: values that may pass (the server decides), and values it must refuse. */
interface Param {
  ok: fc.Arbitrary<string>;
  bad: fc.Arbitrary<string>;
}

/**
 * A query string of parameters that may all pass, then at most one change
 * that must be refused: a bad value, an unknown parameter (refused where the
 * schema lists every parameter) or a repeated one (it arrives as an array).
 */
function query(params: Record<string, Param>, extraAllowed: boolean): fc.Arbitrary<{ qs: string; refused: boolean }> {
  const names = Object.keys(params);
  return fc
    .record({
      picked: fc.record(Object.fromEntries(names.map((k) => [k, fc.option(params[k]!.ok, { nil: undefined, freq: 2 })]))),
      change: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 2 },
        fc.constantFrom(...names).chain((k) => params[k]!.bad.map((v) => ({ kind: 'bad' as const, k, v }))),
        fc
          .tuple(
            hostileString.filter((k) => !names.includes(k)),
            queryValue,
          )
          .map(([k, v]) => ({ kind: 'extra' as const, k, v })),
        fc.constant({ kind: 'repeat' as const }),
      ),
    })
    .map(({ picked, change }) => {
      const pairs = Object.entries(picked).filter(([, v]) => v !== undefined) as Array<[string, string]>;
      let refused = false;
      if (change?.kind === 'bad') {
        const at = pairs.findIndex(([k]) => k === change.k);
        if (at >= 0) pairs[at] = [change.k, change.v];
        else pairs.push([change.k, change.v]);
        refused = true;
      } else if (change?.kind === 'extra') {
        pairs.push([change.k, change.v]);
        refused = !extraAllowed;
      } else if (change?.kind === 'repeat' && pairs[0]) {
        pairs.push(pairs[0]);
        refused = true;
      }
      return { qs: pairs.length ? `?${new URLSearchParams(pairs).toString()}` : '', refused };
    });
}

/** The integer Ajv's type coercion makes of a string, if any: it reads ' 5 ', '0x10' and '1e1' as numbers, and ' ' as 0. */
const coercedInteger = (s: string): number | undefined => (s !== '' && Number.isInteger(Number(s)) ? Number(s) : undefined);
const intParam = (min: number, max: number): Param => ({
  ok: fc.integer({ min, max }).map(String),
  bad: fc
    .oneof(
      fc.constantFrom(String(min - 1), String(max + 1), '1.5', 'abc', '', 'NaN', 'Infinity', '-Infinity', '1e999', '99999999999999999999', '-0.5'),
      hostileString,
    )
    .filter((s) => {
      const n = coercedInteger(s);
      return n === undefined || n < min || n > max;
    }),
});
const enumParam = (values: readonly string[]): Param => ({ ok: fc.constantFrom(...values), bad: hostileString.filter((s) => !values.includes(s)) });
/** Dates JavaScript reads but Postgres (4713 BC to 294276 AD) may not store. */
const farDate = fc.constantFrom(
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '-004714-11-23T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
);
/** Cursors are opaque base64url of `createdAt|id`: forged ones with odd dates and ids, and junk. */
const cursorParam: Param = {
  ok: fc.oneof(
    {
      arbitrary: fc
        .tuple(fc.oneof(hostileDateTime, farDate), fc.oneof({ arbitrary: fc.uuid(), weight: 3 }, hostileString))
        .map(([at, id]) => Buffer.from(`${at}|${id}`).toString('base64url')),
      weight: 3,
    },
    fc.oneof(hostileString, fc.integer().map(String)).map((s) => Buffer.from(s).toString('base64url')),
    hostileString,
  ),
  bad: fc.constant('x'.repeat(201)),
};
const dateParam: Param = {
  ok: hostileDateTime,
  bad: fc
    .oneof(hostileString, fc.constantFrom('2024-01-01', '2024-01-01T00:00:00', '2024-01-01T23:59:60Z'))
    .filter((s) => !/^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d/.test(s) || s.endsWith(':60Z') || !/([Zz]|[+-]\d\d:?\d\d)$/.test(s)),
};

/** A body for POST routes that take none: ignored when it is JSON, refused when it is broken. */
const strayBody = fc.oneof(
  fc.constant({ payload: undefined as string | undefined, headers: {}, ok: true }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => {
    const payload = JSON.stringify(v) ?? 'null';
    // A `__proto__` key anywhere is refused as MALFORMED_BODY (prototype poisoning), like broken JSON.
    return { payload, headers: JSON_TYPE, ok: !/"__proto__"\s*:/.test(payload) };
  }),
  fc.constantFrom('{', '{"a":', '[1,,2]', 'NaN', '{"__proto__":{"a":1}}').map((payload) => ({ payload, headers: JSON_TYPE, ok: false })),
);

/** Over the 8 MiB body limit of the test app (apps/api/tests/helpers.ts). */
const OVERSIZED_BODY = `{"model":"mlp","inputs":[],"pad":"${'x'.repeat(9 * 2 ** 20)}"}`;

/** POST /v1/jobs, with every kind of body and header. */
const submitJob: Gen = (w) => {
  const idempotencyKey = fc.option(
    fc.oneof(
      fc.constantFrom('k1', 'k2', w.otherIdempotencyKey).map((value) => ({ value, valid: true })),
      headerValue.map((value) => ({ value, valid: value.length >= 1 && value.length <= 200 })),
    ),
    { nil: undefined, freq: 2 },
  );
  const routingKey = fc.option(
    fc.oneof(
      fc.constantFrom('customer-1', 'customer-2').map((value) => ({ value, valid: true })),
      headerValue.map((value) => ({ value, valid: value.length >= 1 && value.length <= 200 })),
    ),
    { nil: undefined, freq: 3 },
  );
  const prefer = fc.option(
    fc.oneof(
      fc.constantFrom('wait=0', 'wait=1', 'wait="1"', 'wait=abc', 'wait=-1', 'wait=999999', 'wait=9999999', 'respond-async, wait=1', 'return=minimal'),
      headerValue,
    ),
    { nil: undefined, freq: 2 },
  );
  // With neither header a valid body must be accepted; a reused Idempotency-Key may meet a different body (409).
  // A valid X-Routing-Key changes nothing about acceptance.
  const headers = fc.record({ idempotencyKey, prefer, routingKey }).map(({ idempotencyKey: k, prefer: p, routingKey: r }) => ({
    headers: { ...JSON_TYPE, ...(k && { 'idempotency-key': k.value }), ...(p !== undefined && { prefer: p }), ...(r && { 'x-routing-key': r.value }) },
    expect:
      !(k?.valid ?? true) || !(r?.valid ?? true) || (p !== undefined && p.length > 200)
        ? ('reject' as const)
        : k || p !== undefined
          ? ('any' as const)
          : ('accept' as const),
    waits: preferredWaitSeconds(p) !== undefined,
  }));
  const plainText = validJobBody.map(({ model, inputs }) => JSON.stringify({ model, inputs }));
  const contentType = fc.constantFrom(
    'text/plain',
    'application/x-www-form-urlencoded',
    'application/xml',
    'application/jsonx',
    'json',
    'application',
    '*/*',
    'multipart/form-data; boundary=x',
    'x'.repeat(1000),
  );
  return fc.oneof(
    // The binary forms: framed (binary data extension) and multipart.
    { arbitrary: framedSubmit, weight: 10 },
    { arbitrary: multipartSubmit, weight: 10 },
    {
      arbitrary: fc.tuple(validJobBody, headers).map(([body, h]): FuzzCase => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: h.headers,
        payload: toJsonText(body),
        expect: h.expect,
        as: 'fuzzer',
        waits: h.waits,
        label: 'valid body',
      })),
      weight: 20,
    },
    // The model with an input of every datatype: valid, or one element that does not fit its datatype.
    {
      arbitrary: typedJobBody.map(({ text, unfit }): FuzzCase => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: JSON_TYPE,
        payload: text,
        expect: unfit ? 'reject' : 'accept',
        as: 'fuzzer',
        label: unfit ? `${unfit} value that does not fit` : 'valid all-types body',
      })),
      weight: 20,
    },
    // No Prefer: wait (the route checks for a worker before it validates) and fresh keys only (a reused one may answer 409 first).
    {
      arbitrary: fc.tuple(invalidJobBody, fc.option(fc.uuid(), { nil: undefined, freq: 2 })).map(([{ what, body }, key]): FuzzCase => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: { ...JSON_TYPE, ...(key && { 'idempotency-key': key }) },
        payload: toJsonText(body),
        expect: 'reject',
        as: 'fuzzer',
        label: `invalid ${what}`,
      })),
      weight: 80,
    },
    {
      arbitrary: brokenJsonText(plainText).map((payload): FuzzCase => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: JSON_TYPE,
        payload,
        expect: 'reject',
        as: 'fuzzer',
        label: 'broken JSON',
      })),
      weight: 20,
    },
    {
      arbitrary: fc.tuple(plainText, contentType).map(([payload, type]): FuzzCase => ({
        method: 'POST',
        url: '/v1/jobs',
        headers: { 'content-type': type },
        payload,
        expect: 'reject',
        as: 'fuzzer',
        label: `content type ${type.slice(0, 40)}`,
      })),
      weight: 10,
    },
    {
      arbitrary: fc.constant<FuzzCase>({
        method: 'POST',
        url: '/v1/jobs',
        headers: JSON_TYPE,
        payload: OVERSIZED_BODY,
        expect: 'reject',
        as: 'fuzzer',
        label: 'body over the limit',
      }),
      weight: 1,
    },
  );
};

const byId =
  (method: string, suffix: string, extra: fc.Arbitrary<{ qs: string; refused: boolean }> = fc.constant({ qs: '', refused: false })): Gen =>
  (w) =>
    fc.tuple(jobId(w), extra, method === 'POST' ? strayBody : fc.constant({ payload: undefined, headers: {}, ok: true })).map(([id, q, body]): FuzzCase => ({
      method,
      url: `/v1/jobs/${id.segment}${suffix}${q.qs}`,
      headers: body.headers,
      payload: body.payload,
      expect: id.own && !q.refused && body.ok ? 'any' : 'reject',
      as: 'fuzzer',
      label: id.own ? 'own job' : 'not own job',
    }));

/**
 * GET /v1/jobs/:id/events streams until the job ends, and no worker runs while fuzzing: only requests
 * answered at once are made (ids that are not the fuzzer's, or its own with a Last-Event-ID that is no event id).
 */
const jobEvents: Gen = (w) =>
  fc.oneof(
    jobId(w)
      .filter((id) => !id.own)
      .map((id) => get(`/v1/jobs/${id.segment}/events`, 'reject', 'not own job')),
    fc
      .tuple(fc.constantFrom(...w.ownJobIds), fc.oneof(headerValue, fc.constantFrom('-1', '1.5', '1e3', '0x1', '1234567890', 'NaN', '')))
      .filter(([, v]) => !/^[0-9]{1,9}$/.test(v.trim()))
      .map(([id, v]): FuzzCase => ({
        method: 'GET',
        url: `/v1/jobs/${id}/events`,
        headers: { 'last-event-id': v },
        expect: 'reject',
        as: 'fuzzer',
        label: 'bad Last-Event-ID',
      })),
  );

/** Own jobs have one input, so only index 0 of `inputs` (however Ajv reads it) may succeed. */
const tensorRoute =
  (kind: 'inputs' | 'outputs'): Gen =>
  (w) =>
    fc
      .tuple(
        jobId(w),
        fc.oneof(
          fc.constantFrom('0', '1', '63', '-1', '64', '1.5', '1e3', '0x1', '01', ' ', 'NaN', 'Infinity', '-Infinity', '1e999'),
          hostileString,
          badNumber.map(String),
        ),
      )
      .map(([id, index]): FuzzCase => ({
        method: 'GET',
        url: `/v1/jobs/${id.segment}/${kind}/${percentEncode(index)}`,
        headers: {},
        expect: id.own && kind === 'inputs' && coercedInteger(index) === 0 ? 'any' : 'reject',
        as: 'fuzzer',
        label: `${kind} ${index}`,
      }));

/** A route that takes no input: junk query strings are ignored, so it may always succeed. */
const noInput =
  (url: string): Gen =>
  () =>
    fc
      .option(fc.tuple(hostileString, queryValue), { nil: undefined })
      .map((extra) => get(`${url}${extra ? `?${new URLSearchParams([extra]).toString()}` : ''}`, 'any', 'no input'));

/** Admin-only routes: refused for the fuzzing key; with the admin key, their inputs are fuzzed. */
const adminOnly =
  (gen: (w: FuzzWorld) => fc.Arbitrary<Omit<FuzzCase, 'as'>>): Gen =>
  (w) =>
    fc
      .tuple(gen(w), fc.boolean())
      .map(([c, asAdmin]): FuzzCase => (asAdmin ? { ...c, as: 'admin' } : { ...c, as: 'fuzzer', expect: 'reject', label: `${c.label} without admin` }));

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

/** A v2 model path: registered names and versions may succeed, hostile or unknown ones must be refused. */
const v2Model = (w: FuzzWorld) =>
  fc.oneof(
    {
      arbitrary: fc.constantFrom('mlp', 'transformer', w.otherModelName, 'mlp/versions/1', 'transformer/versions/1').map((path) => ({ path, known: true })),
      weight: 3,
    },
    fc
      .constantFrom('nope', 'mlp/versions/0', 'mlp/versions/99', 'mlp/versions/01', 'mlp/versions/1.5', 'mlp/versions/-1', 'MLP')
      .map((path) => ({ path, known: false })),
    fc.tuple(pathSegment(hostileString), fc.boolean()).map(([s, versioned]) => ({ path: versioned ? `mlp/versions/${s}` : s, known: false })),
  );

/** GET /v2/models/… routes; `ready` answers 503 MODEL_UNAVAILABLE while no worker runs, as an infer does. */
const v2ModelGet =
  (suffix: string, waits: boolean, versioned: boolean): Gen =>
  (w) =>
    v2Model(w)
      .filter(({ path }) => path.includes('/versions/') === versioned)
      .map(({ path, known }): FuzzCase => ({
        ...get(`/v2/models/${path}${suffix}`, known ? (waits ? 'any' : 'accept') : 'reject', known ? 'registered model' : 'unknown model'),
        waits,
      }));

/** POST /v2/models/…/infer: the job bodies as v2 bodies. No worker runs while fuzzing, so a valid one gets 503 MODEL_UNAVAILABLE. */
const v2Infer =
  (versioned: boolean): Gen =>
  (w) => {
    const url = (model: string) => `/v2/models/${model.replace(':', '/versions/')}/infer`;
    // A mutated model that is no reference is sent to mlp: the body is what is being fuzzed.
    const path = (ref: unknown) => {
      const model = typeof ref === 'string' && /^[a-z0-9._-]+(:\d+)?$/.test(ref) ? ref : 'mlp';
      return versioned ? (model.includes(':') ? model : `${model}:1`) : model.split(':')[0]!;
    };
    const post = (u: string, payload: string | Buffer, expect: FuzzCase['expect'], label: string): FuzzCase => ({
      method: 'POST',
      url: u,
      headers: JSON_TYPE,
      payload,
      expect,
      as: 'fuzzer',
      waits: true,
      label,
    });
    return fc.oneof(
      {
        arbitrary: fc
          .tuple(validJobBody, fc.option(fc.record({ id: hostileString, priority: fc.constantFrom(...PRIORITIES) }), { nil: undefined }))
          .map(([b, extra]) =>
            post(
              url(path(b.model)),
              toJsonText({ inputs: b.inputs, ...(extra && { id: extra.id, parameters: { priority: extra.priority, binary_data_output: false } }) }),
              'any',
              'valid v2 body',
            ),
          ),
        weight: 10,
      },
      {
        arbitrary: invalidJobBody.map(({ what, body }) => post(url(path(body.model)), toJsonText({ ...body, model: undefined }), 'reject', `v2 ${what}`)),
        weight: 20,
      },
      {
        arbitrary: fc
          .tuple(
            validJobBody,
            fc.constantFrom<Record<string, unknown>>(
              { outputs: [{ name: 'nope' }] },
              { outputs: [{}] },
              { outputs: 'logits' },
              { parameters: { priority: 'urgent' } },
              { parameters: 1 },
              { id: 1 },
              { id: 'x'.repeat(257) },
              { extra: true },
            ),
          )
          .map(([b, bad]) => post(url(path(b.model)), toJsonText({ inputs: b.inputs, ...bad }), 'reject', `bad v2 field ${Object.keys(bad)[0]}`)),
        weight: 5,
      },
      {
        arbitrary: fc
          .tuple(v2Model(w), validJobBody)
          .filter(([m]) => !m.known)
          .map(([m, b]) => post(`/v2/models/${m.path}/infer`, toJsonText({ inputs: b.inputs }), 'reject', 'unknown model')),
        weight: 3,
      },
      {
        arbitrary: brokenJsonText(validJobBody.map((b) => JSON.stringify({ inputs: b.inputs }))).map((payload) =>
          post(url(versioned ? 'mlp:1' : 'mlp'), payload, 'reject', 'broken JSON'),
        ),
        weight: 3,
      },
      // The binary tensor data extension: valid framings, and each broken one way.
      { arbitrary: binaryInferCases(url(versioned ? 'mlp:1' : 'mlp')), weight: 10 },
    );
  };

/**
 * PUT /v1/models/:name/routing. Only version 1 of mlp, transformer and the
 * other tenant's model is sure to exist, so valid tables route to it (jobs for
 * those names keep running on a registered version while the fuzzing goes on).
 */
const putRouting: Gen = (w) => {
  const put = (
    name: string,
    payload: string | Buffer | undefined,
    expect: FuzzCase['expect'],
    label: string,
    headers: Record<string, string> = JSON_TYPE,
  ): FuzzCase => ({ method: 'PUT', url: `/v1/models/${name}/routing`, headers, payload, expect, as: 'fuzzer', label });
  const known = fc.constantFrom('mlp', 'transformer', w.otherModelName);
  const weight = fc.integer({ min: 1, max: 1_000_000 });
  const badTable = fc.oneof(
    fc.constant({ what: 'all weights zero', versions: [{ version: 1, weight: 0 }] as unknown }),
    weight.map((wt) => ({
      what: 'duplicate version',
      versions: [
        { version: 1, weight: wt },
        { version: 1, weight: wt },
      ],
    })),
    fc.integer({ min: 50, max: 999_999_999 }).map((version) => ({ what: 'unknown version', versions: [{ version, weight: 1 }] })),
    fc.constantFrom(-1, 1.5, 1_000_001, 1e999, 'abc', [], {}).map((bad) => ({ what: `weight ${String(bad)}`, versions: [{ version: 1, weight: bad }] })),
    fc.constantFrom(0, -1, 1.5, 1_000_000_000, 'abc', [], {}).map((bad) => ({ what: `version ${String(bad)}`, versions: [{ version: bad, weight: 1 }] })),
    fc.constant({ what: 'extra field', versions: [{ version: 1, weight: 1, canary: true }] }),
    fc.constant({ what: 'missing weight', versions: [{ version: 1 }] }),
    fc.constant({ what: 'too many rows', versions: Array.from({ length: 33 }, (_, i) => ({ version: i + 1, weight: 1 })) }),
    fc.constantFrom<unknown>(null, 1, 'x', { version: 1, weight: 1 }).map((versions) => ({ what: 'versions not a list', versions })),
  );
  return fc.oneof(
    {
      arbitrary: fc
        .tuple(known, fc.option(weight, { nil: undefined }))
        .map(([name, wt]) => put(name, JSON.stringify({ versions: wt === undefined ? [] : [{ version: 1, weight: wt }] }), 'accept', 'valid table')),
      weight: 5,
    },
    { arbitrary: fc.tuple(known, badTable).map(([name, { what, versions }]) => put(name, toJsonText({ versions }), 'reject', what)), weight: 10 },
    { arbitrary: known.map((name) => put(name, JSON.stringify({ versions: [], note: 'x' }), 'reject', 'unknown body field')), weight: 1 },
    {
      arbitrary: fc
        .tuple(fc.oneof(fc.constantFrom('nope', 'mlp:1', 'MLP'), pathSegment(hostileString)), weight)
        .map(([name, wt]) => put(name, JSON.stringify({ versions: [{ version: 1, weight: wt }] }), 'reject', 'unknown or hostile model')),
      weight: 3,
    },
    // Coerced types (true → 1, null → 0) may pass: the server decides, but never with a 5xx.
    {
      arbitrary: fc.tuple(known, fc.jsonValue({ maxDepth: 3 })).map(([name, body]) => put(name, JSON.stringify(body) ?? 'null', 'any', 'any JSON')),
      weight: 3,
    },
    {
      arbitrary: fc
        .tuple(
          known,
          fc.constantFrom(
            '',
            '{',
            '{"versions":',
            '{"versions":[{"version":1,"weight":1}',
            "{'versions':[]}",
            '{"versions":[]}x',
            '{"versions":[{"version":01,"weight":1}]}',
          ),
        )
        .map(([name, payload]) => put(name, payload, 'reject', 'broken JSON')),
      weight: 2,
    },
    {
      arbitrary: fc
        .tuple(known, fc.constantFrom('text/plain', 'application/xml', 'multipart/form-data; boundary=x'))
        .map(([name, type]) => put(name, '{"versions":[]}', 'reject', `content type ${type}`, { 'content-type': type })),
      weight: 1,
    },
  );
};

/**
 * POST /v1/embeddings. No model here was registered with a tokenizer, so a
 * well-formed request is still refused (MODEL_NOT_EMBEDDING, or the model is
 * unknown); malformed ones must be refused before that, never with a 5xx.
 */
const embeddings: Gen = (w) => {
  const post = (payload: string, expect: FuzzCase['expect'], label: string, headers: Record<string, string> = JSON_TYPE): FuzzCase => ({
    method: 'POST',
    url: '/v1/embeddings',
    headers,
    payload,
    expect,
    as: 'fuzzer',
    label,
  });
  const model = fc.oneof(fc.constantFrom('mlp', 'transformer', 'transformer:1', w.otherModelName, 'nope'), hostileString);
  const input = fc.oneof(
    hostileString,
    fc.array(hostileString, { minLength: 1, maxLength: 4 }),
    fc.array(fc.nat(2_000), { minLength: 1, maxLength: 8 }),
    fc.array(fc.array(fc.nat(2_000), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  );
  const bad = fc.oneof(
    fc.constant({ what: 'no input', body: { model: 'transformer' } as unknown }),
    fc.constant({ what: 'empty list', body: { model: 'transformer', input: [] } }),
    fc
      .constantFrom<unknown>(1, null, true, [[]], [-1], [1.5], ['a', 1], [[1], 'a'], { text: 'a' })
      .map((bad) => ({ what: `input ${JSON.stringify(bad)}`, body: { model: 'transformer', input: bad } })),
    fc
      .constantFrom<unknown>('int8', 1, null)
      .map((bad) => ({ what: `encoding_format ${String(bad)}`, body: { model: 'transformer', input: 'a', encoding_format: bad } })),
    fc
      .constantFrom<unknown>(0, -1, 1.5, 1e999, 'x')
      .map((bad) => ({ what: `dimensions ${String(bad)}`, body: { model: 'transformer', input: 'a', dimensions: bad } })),
    fc.constant({ what: 'unknown field', body: { model: 'transformer', input: 'a', temperature: 1 } }),
  );
  return fc.oneof(
    { arbitrary: fc.tuple(model, input).map(([m, i]) => post(toJsonText({ model: m, input: i }), 'reject', 'not an embedding model')), weight: 5 },
    { arbitrary: bad.map(({ what, body }) => post(toJsonText(body), 'reject', what)), weight: 5 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((body) => post(JSON.stringify(body) ?? 'null', 'reject', 'any JSON')), weight: 2 },
    {
      arbitrary: fc.constantFrom('', '{', '{"model":"transformer","input":', "{'input':'a'}").map((payload) => post(payload, 'reject', 'broken JSON')),
      weight: 1,
    },
  );
};

/**
 * POST /v1/jobs/bulk-cancel and /bulk-retry with the fuzzing key (its own jobs only). Valid filters use small
 * limits, so alternating cancels and retries cannot multiply its jobs; an empty filter and bad fields are refused.
 */
const bulkAction =
  (action: 'cancel' | 'retry'): Gen =>
  (w) => {
    const post = (payload: string, expect: FuzzCase['expect'], label: string, headers: Record<string, string> = JSON_TYPE): FuzzCase => ({
      method: 'POST',
      url: `/v1/jobs/bulk-${action}`,
      headers,
      payload,
      expect,
      as: 'fuzzer',
      label: `bulk ${action}: ${label}`,
    });
    const validFilter = fc
      .record(
        {
          model: fc.constantFrom('mlp', 'transformer', w.otherModelName, 'nope'),
          status: fc.constantFrom(...JOB_STATUSES),
          priority: fc.constantFrom(...PRIORITIES),
          errorCode: fc.constantFrom('INFERENCE_FAILED', 'MODEL_LOAD_FAILED', 'DEADLINE_EXCEEDED'),
          keyId: fc.uuid(),
          id: fc.constantFrom(...w.ownJobIds, ...w.otherJobIds),
          createdAfter: fc.date({ min: new Date('2000-01-01'), max: new Date('2100-01-01'), noInvalidDate: true }).map((d) => d.toISOString()),
        },
        { requiredKeys: [] },
      )
      .filter((f) => Object.keys(f).length > 0);
    const options = fc.record({ limit: fc.integer({ min: 1, max: 3 }), dryRun: fc.boolean() }, { requiredKeys: ['limit'] });
    const hostileFilter = fc
      .record({ model: hostileString, errorText: hostileString, createdBefore: hostileDateTime, id: hostileString }, { requiredKeys: [] })
      .filter((f) => Object.keys(f).length > 0);
    const bad = fc.oneof(
      fc.constant({ what: 'empty filter', body: { filter: {}, limit: 1 } as unknown }),
      fc.constant({ what: 'no filter', body: { limit: 1 } }),
      fc
        .constantFrom<unknown>(0, -1, 1.5, 10_001, 1e999, 'x', null)
        .map((limit) => ({ what: `limit ${String(limit)}`, body: { filter: { model: 'mlp' }, limit } })),
      fc
        .constantFrom<unknown>('yes', 'true', 'false', 1, 0, null, [])
        .map((dryRun) => ({ what: `dryRun ${String(dryRun)}`, body: { filter: { model: 'mlp' }, limit: 1, dryRun } })),
      fc.constant({ what: 'unknown field', body: { filter: { model: 'mlp' }, limit: 1, force: true } }),
      fc.constantFrom('cursor', 'limit', 'owner').map((k) => ({ what: `filter.${k}`, body: { filter: { model: 'mlp', [k]: '1' }, limit: 1 } })),
      fc.constantFrom<unknown>(null, 'mlp', [], 1).map((filter) => ({ what: `filter ${JSON.stringify(filter)}`, body: { filter, limit: 1 } })),
    );
    return fc.oneof(
      { arbitrary: fc.tuple(validFilter, options).map(([filter, o]) => post(JSON.stringify({ filter, ...o }), 'accept', 'valid filter')), weight: 5 },
      { arbitrary: hostileFilter.map((filter) => post(toJsonText({ filter, limit: 1 }), 'any', 'hostile filter')), weight: 3 },
      { arbitrary: bad.map(({ what, body }) => post(toJsonText(body), 'reject', what)), weight: 5 },
      { arbitrary: fc.constantFrom('', '{', '{"filter":', "{'filter':{}}").map((payload) => post(payload, 'reject', 'broken JSON')), weight: 1 },
      { arbitrary: fc.constant(post('{"filter":{"model":"mlp"},"limit":1}', 'reject', 'text/plain', { 'content-type': 'text/plain' })), weight: 1 },
    );
  };

/** POST /v1/models/:name/pause and /resume (admin): registered names pass, unknown and hostile ones are refused; a stray body is ignored unless broken. */
const pauseOrResume = (action: 'pause' | 'resume'): Gen =>
  adminOnly((w) =>
    fc
      .tuple(
        fc.oneof(
          fc.constantFrom('mlp', 'transformer', w.otherModelName).map((name) => ({ name, known: true })),
          fc.oneof(fc.constantFrom('nope', 'mlp:1', 'MLP'), pathSegment(hostileString)).map((name) => ({ name, known: false })),
        ),
        strayBody,
      )
      .map(([{ name, known }, body]) => ({
        method: 'POST',
        url: `/v1/models/${name}/${action}`,
        headers: body.headers,
        payload: body.payload,
        expect: known && body.ok ? ('accept' as const) : ('reject' as const),
        label: `${action} ${known ? 'registered' : 'unknown or hostile'} model`,
      })),
  );

/**
 * DELETE /v1/models/:name (retire). Only the fuzzer's own uploads (fuzz-model, fuzz.model_2, which may not exist yet)
 * may be retired: the other families keep submitting to mlp, transformer and the other tenant's model, so those only
 * get requests that must be refused before anything changes (unknown versions, malformed references, bad queries).
 */
const retireModel: Gen = () => {
  const del = (path: string, qs: string, expect: FuzzCase['expect'], label: string): FuzzCase => ({
    method: 'DELETE',
    url: `/v1/models/${path}${qs}`,
    headers: {},
    expect,
    as: 'fuzzer',
    label,
  });
  const known = fc.constantFrom('mlp', 'transformer', 'mlp:1');
  return fc.oneof(
    {
      arbitrary: fc
        .tuple(fc.constantFrom('fuzz-model', 'fuzz.model_2', 'fuzz-model:1', 'fuzz.model_2:2'), fc.constantFrom('', '?reroute=true', '?reroute=false'))
        .map(([path, qs]) => del(path, qs, 'any', "the fuzzer's own model")),
      weight: 3,
    },
    {
      arbitrary: fc
        .constantFrom('mlp:999999999', 'transformer:424242', 'nope', 'nope:1', 'MLP', 'mlp:0', 'mlp:01', 'mlp:1:2', 'mlp:-1', 'mlp:', ':1')
        .map((path) => del(path, '', 'reject', 'unknown or malformed reference')),
      weight: 4,
    },
    { arbitrary: pathSegment(hostileString).map((path) => del(path, '', 'reject', 'hostile name')), weight: 3 },
    {
      arbitrary: fc
        .tuple(known, fc.constantFrom('?reroute=maybe', '?reroute=yes', '?force=true', '?reroute=true&x=1'))
        .map(([path, qs]) => del(path, qs, 'reject', 'bad query')),
      weight: 3,
    },
  );
};

/** A retention override: seconds (at least 60) or null; the bad ones are refused. */
const retentionBody = fc.oneof(
  fc.oneof(fc.constantFrom<number | null>(null, 60, 2_000_000_000), fc.integer({ min: 60, max: 2_000_000_000 })).map((retentionS) => ({
    payload: JSON.stringify({ retentionS }),
    ok: true,
  })),
  fc
    .oneof(badNumber, fc.constantFrom<unknown>(0, 59, -60, 2_000_000_001, 'x', '', [], {}, true))
    .map((retentionS) => ({ payload: toJsonText({ retentionS }), ok: false })),
  fc.constantFrom('{', '{}', '[]', 'null', '{"retentionS":60,"weight":2}', '{"__proto__":{"retentionS":60}}').map((payload) => ({ payload, ok: false })),
);

/** PATCH /v1/models/:name (models:write): a retention for a registered name passes; unknown or hostile names and bad bodies are refused. */
const patchModelSettings: Gen = (w) =>
  fc
    .tuple(
      fc.oneof(
        fc.constantFrom('mlp', 'transformer', w.otherModelName).map((name) => ({ name, known: true })),
        fc.oneof(fc.constantFrom('nope', 'mlp:1', 'MLP'), pathSegment(hostileString)).map((name) => ({ name, known: false })),
      ),
      retentionBody,
    )
    .map(([{ name, known }, body]): FuzzCase => ({
      method: 'PATCH',
      url: `/v1/models/${name}`,
      headers: JSON_TYPE,
      payload: body.payload,
      expect: known && body.ok ? 'accept' : 'reject',
      as: 'fuzzer',
      label: `model retention: ${known ? 'registered' : 'unknown or hostile'} model, ${body.ok ? 'valid' : 'bad'} body`,
    }));

/** POST /v1/uploads (jobs:write): a known datatype and a small concrete shape get a presigned URL; anything else is refused. */
const createUpload: Gen = () =>
  fc
    .oneof(
      fc
        .tuple(fc.constantFrom(...DATATYPES.filter(isFixedSizeDataType)), fc.array(fc.integer({ min: 0, max: 16 }), { maxLength: 4 }))
        .map(([datatype, shape]) => ({ payload: JSON.stringify({ datatype, shape }), ok: true })),
      fc
        .oneof(
          fc.tuple(fc.oneof(hostileString, fc.constantFrom('BYTES', 'fp32', '')), fc.constant([1])),
          fc.tuple(fc.constant('FP32'), fc.array(badNumber, { minLength: 1, maxLength: 3 })),
          fc.tuple(fc.constant('FP32'), fc.constant(Array.from({ length: 17 }, () => 1))),
          // Too many bytes: past INPUT_MAX_BYTES (413) or past a safe integer (400).
          fc.tuple(fc.constant('FP64'), fc.constantFrom([65_536, 65_536], [2 ** 31, 2 ** 31, 2 ** 31])),
        )
        .map(([datatype, shape]) => ({ payload: toJsonText({ datatype, shape }), ok: false })),
      fc.constantFrom('{', '{}', '[]', 'null', '{"datatype":"FP32"}', '{"datatype":"FP32","shape":[1],"data":[1]}').map((payload) => ({ payload, ok: false })),
    )
    .map(({ payload, ok }): FuzzCase => ({
      method: 'POST',
      url: '/v1/uploads',
      headers: JSON_TYPE,
      payload,
      expect: ok ? 'accept' : 'reject',
      as: 'fuzzer',
      label: `create upload: ${ok ? 'valid' : 'bad'} body`,
    }));

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
  'GET /v1/batches/:id': adminOnly(() =>
    pathSegment(fakeId).map((id) => ({ method: 'GET', url: `/v1/batches/${id}`, headers: {}, expect: 'reject' as const, label: 'unknown batch' })),
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
