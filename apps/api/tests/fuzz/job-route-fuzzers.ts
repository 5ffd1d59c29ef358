// Generators for the job routes: submit, the routes on one job (by id, events,
// tensors), bulk cancel and retry, and uploads.
import fc from 'fast-check';
import { DATATYPES, isFixedSizeDataType, JOB_STATUSES, PRIORITIES, preferredWaitSeconds } from '@inferq/contracts';
import { badNumber, fakeId, headerValue, hostileDateTime, hostileString, pathSegment, percentEncode, toJsonText } from './hostile-values.ts';
import { brokenJsonText, invalidJobBody, validJobBody } from './job-bodies.ts';
import { typedJobBody } from './typed-bodies.ts';
import { framedSubmit, multipartSubmit } from './submit-body-forms.ts';
import { coercedInteger } from './query-params.ts';
import { get, JSON_TYPE, strayBody, type FuzzWorld, type Gen } from './route-helpers.ts';
import type { FuzzCase } from './fuzz-case.ts';

/** Ids for `:id`: the fuzzer's own (may succeed), another tenant's and made-up ones (must fail). */
const jobId = (w: FuzzWorld) =>
  fc.oneof(
    fc.constantFrom(...w.ownJobIds).map((id) => ({ segment: id, own: true })),
    fc.constantFrom(...w.otherJobIds).map((id) => ({ segment: id, own: false })),
    pathSegment(fakeId).map((segment) => ({ segment, own: false })),
  );

/** Over the 8 MiB body limit of the test app (apps/api/tests/helpers.ts). */
const OVERSIZED_BODY = `{"model":"mlp","inputs":[],"pad":"${'x'.repeat(9 * 2 ** 20)}"}`;

/** POST /v1/jobs, with every kind of body and header. */
export const submitJob: Gen = (w) => {
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

export const byId =
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
export const jobEvents: Gen = (w) =>
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
export const tensorRoute =
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

/**
 * POST /v1/jobs/bulk-cancel and /bulk-retry with the fuzzing key (its own jobs only). Valid filters use small
 * limits, so alternating cancels and retries cannot multiply its jobs; an empty filter and bad fields are refused.
 */
export const bulkAction =
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

/** POST /v1/uploads (jobs:write): a known datatype and a small concrete shape get a presigned URL; anything else is refused. */
export const createUpload: Gen = () =>
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
