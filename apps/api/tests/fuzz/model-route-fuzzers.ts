// Generators for the model management routes: routing tables, pause and resume,
// retire, and settings (the retention body is shared with PATCH /v1/keys/:id).
import fc from 'fast-check';
import { badNumber, hostileString, pathSegment, toJsonText } from './hostile-values.ts';
import { adminOnly, JSON_TYPE, strayBody, type Gen } from './route-helpers.ts';
import type { FuzzCase } from './fuzz-case.ts';

/**
 * PUT /v1/models/:name/routing. Only version 1 of mlp, transformer and the
 * other tenant's model is sure to exist, so valid tables route to it (jobs for
 * those names keep running on a registered version while the fuzzing goes on).
 */
export const putRouting: Gen = (w) => {
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

/** POST /v1/models/:name/pause and /resume (admin): registered names pass, unknown and hostile ones are refused; a stray body is ignored unless broken. */
export const pauseOrResume = (action: 'pause' | 'resume'): Gen =>
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
export const retireModel: Gen = () => {
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
export const retentionBody = fc.oneof(
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
export const patchModelSettings: Gen = (w) =>
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
