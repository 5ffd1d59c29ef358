// Building blocks of hostile input: strings, numbers, ids, dates and raw JSON
// tokens that the request generators combine.
import fc from 'fast-check';

/** A JSON token written verbatim where JSON.stringify cannot (NaN, 1e999, -0, deep nesting, bad escapes). */
export class RawJson {
  constructor(readonly text: string) {}
}

const RAW_MARK = '__fuzz_raw_7f3a_';

/** JSON text of `value`, with every RawJson inside written verbatim. */
export function toJsonText(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_key, v: unknown) => {
    if (!(v instanceof RawJson)) return v;
    raws.push(v.text);
    return `${RAW_MARK}${raws.length - 1}`;
  });
  return text.replace(new RegExp(`"${RAW_MARK}(\\d+)"`, 'g'), (_m, i: string) => raws[Number(i)]!);
}

/** Arrays nested `depth` deep around `inner`, as raw JSON (a recursive JSON.stringify would overflow first). */
export const nestedArrayText = (depth: number, inner = '1'): RawJson => new RawJson(`${'['.repeat(depth)}${inner}${']'.repeat(depth)}`);

const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const controlChar = fc.integer({ min: 0, max: 0x1f }).map((c) => String.fromCharCode(c));

/** Strings chosen to break parsers, SQL, paths, logs and Postgres text. */
const NASTY_STRINGS = [
  "' OR 1=1--",
  "'; DROP TABLE jobs;--",
  '" OR ""="',
  '1; SELECT pg_sleep(10)',
  "admin'--",
  '%27%20OR%201%3D1',
  '../../../../etc/passwd',
  '..%2f..%2fetc%2fpasswd',
  '%2e%2e/%2e%2e/',
  '%252e%252e%252f',
  '..\\..\\windows\\win.ini',
  '/etc/passwd',
  '\u0000',
  'mlp\u0000',
  'a\u0000b',
  '%00',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\uffff',
  '\ufeff',
  '\u202eevil',
  '😀',
  'é',
  '{{7*7}}',
  '${jndi:ldap://x/a}',
  '<script>alert(1)</script>',
  '\r\nX-Injected: 1',
  '\t',
  ' ',
  '',
  'NaN',
  'Infinity',
  '-Infinity',
  '-0',
  '1e309',
  '0x10',
  '__proto__',
  'constructor',
  'prototype',
  'toString',
  'null',
  'undefined',
  'true',
  'mlp:',
  'mlp:0',
  'mlp:-1',
  'mlp:1.5',
  'mlp:1:2',
  'mlp:99999999999999999999',
  ':1',
  'MLP',
  'mlp ',
  ' mlp',
];

/** Any text, weighted toward the nasty: SQL, traversal, NUL, lone surrogates, control characters, long runs. */
export const hostileString: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 6 },
  { arbitrary: fc.string({ unit: fc.oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }), loneSurrogate, controlChar), maxLength: 40 }), weight: 3 },
  { arbitrary: fc.string({ maxLength: 30 }), weight: 1 },
  { arbitrary: fc.tuple(fc.constantFrom('a', 'é', '😀', '\u0000', '%'), fc.integer({ min: 200, max: 20_000 })).map(([c, n]) => c.repeat(n)), weight: 1 },
);

/** Numbers and number-likes that are not a usable tensor dim or count (never a non-negative safe integer). */
export const badNumber: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(-1, -(2 ** 31), -(2 ** 53), 0.5, 1.5, 63.999, 1e-7, 2 ** 53, 2 ** 53 + 2, 2 ** 64, 1e20, 1e308, Number.MAX_VALUE),
  fc.constantFrom(
    new RawJson('NaN'),
    new RawJson('Infinity'),
    new RawJson('-Infinity'),
    new RawJson('1e999'),
    new RawJson('-1e999'),
    new RawJson('0x10'),
    new RawJson('1_000'),
  ),
  fc.constantFrom('abc', '', '1.5', '-1', 'NaN', 'Infinity', '1e400', '9007199254740993', {}, [], [1], { valueOf: 1 }),
  fc.double({ noNaN: true, min: -1e300, max: 1e300 }).filter((d) => !Number.isInteger(d)),
  fc.integer({ min: -(2 ** 31), max: -1 }),
);

/** Dims a shape may legally carry but that make its element count explode. */
export const hugeDim = fc.constantFrom(2 ** 20, 2 ** 26, 2 ** 31 - 1, 2 ** 32, 2 ** 40, 2 ** 52, Number.MAX_SAFE_INTEGER);

/** Ids for `:id` params: others' and own real ids come from the world; these are the made-up ones. */
export const fakeId: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: fc.uuid(), weight: 3 },
  {
    arbitrary: fc.constantFrom(
      '00000000-0000-0000-0000-000000000000',
      'ffffffff-ffff-ffff-ffff-ffffffffffff',
      '00000000-0000-0000-0000-00000000000',
      '00000000-0000-0000-0000-0000000000000',
    ),
    weight: 1,
  },
  { arbitrary: hostileString, weight: 4 },
);

/** Percent-encodes the UTF-8 of any string (encodeURIComponent throws on lone surrogates). */
export const percentEncode = (s: string): string =>
  Array.from(Buffer.from(s, 'utf8'), (b) =>
    /[A-Za-z0-9\-._~]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : `%${b.toString(16).toUpperCase().padStart(2, '0')}`,
  ).join('');

/** A path segment: usually percent-encoded, sometimes raw traversal. */
export const pathSegment = (value: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.oneof(
    { arbitrary: value.map(percentEncode), weight: 4 },
    {
      arbitrary: fc.constantFrom('..%2f..%2fv1%2fkeys', '%2e%2e', '%2e%2e%2f%2e%2e', '%00', '%ff', '%E0%A4%A', '%', '%%', '..;', '.', '~', '*', 'x%20y'),
      weight: 1,
    },
  );

/** Date-time strings: valid far and near, leap seconds, offsets JavaScript cannot read, and junk. */
export const hostileDateTime: fc.Arbitrary<string> = fc.oneof(
  fc.date({ min: new Date('0000-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.constantFrom(
    '2024-01-01T23:59:60Z',
    '2016-12-31T23:59:60.5Z',
    '2024-06-30T23:59:60+00:00',
    '2024-01-01T00:00:00+05',
    '2024-01-01T00:00:00-23',
    '2024-01-01 00:00:00Z',
    '2024-01-01t00:00:00z',
    '2024-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '0000-01-01T00:00:00Z',
    '9999-12-31T23:59:59-23:59',
    '2024-01-01T00:00:00',
    '2024-01-01T00:00:00.1234567891234Z',
    '+275760-09-13T00:00:00Z',
    '-271821-04-20T00:00:00Z',
    '2024-13-01T00:00:00Z',
    'yesterday',
    '0',
    '1e12',
    'NaN',
    '',
  ),
  hostileString,
);

/** Values for a query parameter: what a list route may reasonably get, and what it must refuse. */
export const queryValue: fc.Arbitrary<string> = fc.oneof(
  hostileString,
  fc.integer({ min: -1000, max: 1_000_000 }).map(String),
  fc.constantFrom('0', '1', '500', '501', '1e3', '1.5', '-0', '0x10', 'true', '[]', '{}', 'null'),
);

/** Header values Node's HTTP parser lets through (no CR, LF or NUL; latin1 only). */
export const headerValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('', ' ', 'x'.repeat(200), 'x'.repeat(201), 'x'.repeat(8_000), "' OR 1=1--", '../../etc/passwd', 'caf\xe9\xff', '\t', '%00', 'a,b', 'a;b=c'),
  fc.string({
    unit: fc
      .integer({ min: 0x20, max: 0xff })
      .filter((c) => c !== 0x7f)
      .map((c) => String.fromCharCode(c)),
    maxLength: 300,
  }),
);
