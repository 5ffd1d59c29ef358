// What every route generator shares: the data they aim at, their type, and the
// small request helpers (JSON header, GET, stray body, no-input and admin-only routes).
import fc from 'fast-check';
import { hostileString, queryValue } from './hostile-values.ts';
import type { FuzzCase } from './fuzz-case.ts';

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

export type Gen = (w: FuzzWorld) => fc.Arbitrary<FuzzCase>;

export const JSON_TYPE = { 'content-type': 'application/json' };
export const get = (url: string, expect: FuzzCase['expect'], label: string): FuzzCase => ({ method: 'GET', url, headers: {}, expect, as: 'fuzzer', label });

/** A body for POST routes that take none: ignored when it is JSON, refused when it is broken. */
export const strayBody = fc.oneof(
  fc.constant({ payload: undefined as string | undefined, headers: {}, ok: true }),
  fc.jsonValue({ maxDepth: 3 }).map((v) => {
    const payload = JSON.stringify(v) ?? 'null';
    // A `__proto__` key anywhere is refused as MALFORMED_BODY (prototype poisoning), like broken JSON.
    return { payload, headers: JSON_TYPE, ok: !/"__proto__"\s*:/.test(payload) };
  }),
  fc.constantFrom('{', '{"a":', '[1,,2]', 'NaN', '{"__proto__":{"a":1}}').map((payload) => ({ payload, headers: JSON_TYPE, ok: false })),
);

/** A route that takes no input: junk query strings are ignored, so it may always succeed. */
export const noInput =
  (url: string): Gen =>
  () =>
    fc
      .option(fc.tuple(hostileString, queryValue), { nil: undefined })
      .map((extra) => get(`${url}${extra ? `?${new URLSearchParams([extra]).toString()}` : ''}`, 'any', 'no input'));

/** Admin-only routes: refused for the fuzzing key; with the admin key, their inputs are fuzzed. */
export const adminOnly =
  (gen: (w: FuzzWorld) => fc.Arbitrary<Omit<FuzzCase, 'as'>>): Gen =>
  (w) =>
    fc
      .tuple(gen(w), fc.boolean())
      .map(([c, asAdmin]): FuzzCase => (asAdmin ? { ...c, as: 'admin' } : { ...c, as: 'fuzzer', expect: 'reject', label: `${c.label} without admin` }));
