// Query strings for the routes that take parameters: values that may pass and
// values that must be refused, per parameter kind (integer, enum, cursor, date).
import fc from 'fast-check';
import { hostileDateTime, hostileString, queryValue } from './hostile-values.ts';

/** A query parameter: values that may pass (the server decides), and values it must refuse. */
export interface Param {
  ok: fc.Arbitrary<string>;
  bad: fc.Arbitrary<string>;
}

/**
 * A query string of parameters that may all pass, then at most one change
 * that must be refused: a bad value, an unknown parameter (refused where the
 * schema lists every parameter) or a repeated one (it arrives as an array).
 */
export function query(params: Record<string, Param>, extraAllowed: boolean): fc.Arbitrary<{ qs: string; refused: boolean }> {
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
export const coercedInteger = (s: string): number | undefined => (s !== '' && Number.isInteger(Number(s)) ? Number(s) : undefined);
export const intParam = (min: number, max: number): Param => ({
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
export const enumParam = (values: readonly string[]): Param => ({ ok: fc.constantFrom(...values), bad: hostileString.filter((s) => !values.includes(s)) });
/** Dates JavaScript reads but Postgres (4713 BC to 294276 AD) may not store. */
const farDate = fc.constantFrom(
  '-271821-04-20T00:00:00.000Z',
  '+275760-09-13T00:00:00.000Z',
  '-004714-11-23T00:00:00.000Z',
  '-000001-01-01T00:00:00.000Z',
  '0000-01-01T00:00:00.000Z',
);
/** Cursors are opaque base64url of `createdAt|id`: forged ones with odd dates and ids, and junk. */
export const cursorParam: Param = {
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
export const dateParam: Param = {
  ok: hostileDateTime,
  bad: fc
    .oneof(hostileString, fc.constantFrom('2024-01-01', '2024-01-01T00:00:00', '2024-01-01T23:59:60Z'))
    .filter((s) => !/^\d{4}-\d\d-\d\d[Tt ]\d\d:\d\d:\d\d/.test(s) || s.endsWith(':60Z') || !/([Zz]|[+-]\d\d:?\d\d)$/.test(s)),
};
