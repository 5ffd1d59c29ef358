// POST /v1/jobs bodies: valid KServe v2 requests for the demo models, and the
// same requests with one hostile change each. A mutated body is never valid,
// so it must be refused with a 4xx.
import fc from 'fast-check';
import { DATATYPES, PRIORITIES } from '@inferq/contracts';
import { RawJson, badNumber, hostileDateTime, hostileString, hugeDim, nestedArrayText } from './hostile-values.ts';

type Tensor = Record<string, unknown>;
export interface JobBody {
  model: unknown;
  inputs: unknown;
  [field: string]: unknown;
}

const toBase64 = (typed: Float32Array | BigInt64Array): string => Buffer.from(typed.buffer, typed.byteOffset, typed.byteLength).toString('base64');

/** FP32 values JSON can carry, extremes included: ±max, denormals, -0, values that round to 0 (past ±max they do not fit: badElement). */
const fp32Value = fc.oneof(
  { arbitrary: fc.float({ noNaN: true, noDefaultInfinity: true }), weight: 4 },
  { arbitrary: fc.constantFrom(3.4028234663852886e38, -3.4028234663852886e38, 1.401298464324817e-45, 5e-324, -0, 0, 2 ** 127), weight: 1 },
);

const mlpTensor = fc
  .record({
    rows: fc.integer({ min: 1, max: 3 }),
    values: fc.array(fp32Value, { minLength: 192, maxLength: 192 }),
    encoding: fc.constantFrom('flat', 'nested', 'base64'),
  })
  .map(({ rows, values, encoding }): Tensor => {
    const flat = values.slice(0, rows * 64);
    const data =
      encoding === 'base64'
        ? toBase64(Float32Array.from(flat))
        : encoding === 'nested'
          ? Array.from({ length: rows }, (_, r) => flat.slice(r * 64, r * 64 + 64))
          : flat;
    return { name: 'features', datatype: 'FP32', shape: [rows, 64], data };
  });

/** INT64 elements as JSON numbers (safe integers) or decimal strings (the full int64 range). */
const int64Value = fc.oneof(
  fc.integer({ min: 0, max: 999 }),
  fc.constantFrom(Number.MAX_SAFE_INTEGER, -Number.MAX_SAFE_INTEGER, '9223372036854775807', '-9223372036854775808', '0', '-1'),
);

const transformerTensors = fc
  .record({
    batch: fc.integer({ min: 1, max: 2 }),
    seq: fc.integer({ min: 1, max: 6 }),
    ids: fc.array(int64Value, { minLength: 12, maxLength: 12 }),
    base64: fc.boolean(),
  })
  .map(({ batch, seq, ids, base64 }): Tensor[] => {
    const n = batch * seq;
    const values = ids.slice(0, n);
    const mask = Array.from({ length: n }, (_, i) => i % 2);
    const encode = (v: Array<number | string>) => (base64 ? toBase64(BigInt64Array.from(v, (x) => BigInt(x))) : v);
    return [
      { name: 'input_ids', datatype: 'INT64', shape: [batch, seq], data: encode(values) },
      { name: 'attention_mask', datatype: 'INT64', shape: [batch, seq], data: encode(mask) },
    ];
  });

/** Text the server can store (no NUL), any script, at most `maxLength` code points as the schema counts them. */
const storableText = (maxLength: number) => fc.string({ unit: 'grapheme', maxLength }).filter((s) => !s.includes('\u0000') && [...s].length <= maxLength);

/** A valid body for one of the registered models (mlp, transformer), with any of the optional fields. */
export const validJobBody: fc.Arbitrary<JobBody> = fc
  .record({
    model: fc.constantFrom('mlp', 'mlp:1', 'transformer', 'transformer:1'),
    mlp: mlpTensor,
    transformer: transformerTensors,
    priority: fc.option(fc.constantFrom(...PRIORITIES), { nil: undefined }),
    // `__proto__` keys are refused as MALFORMED_BODY before any route (prototype poisoning): not a valid body.
    metadata: fc.option(
      fc.dictionary(
        storableText(64).filter((k) => k !== '__proto__'),
        storableText(200),
        { maxKeys: 4 },
      ),
      { nil: undefined },
    ),
    deadline: fc.option(
      fc.date({ min: new Date('2100-01-01T00:00:00Z'), max: new Date('9999-12-31T00:00:00Z'), noInvalidDate: true }).map((d) => d.toISOString()),
      { nil: undefined },
    ),
    webhook: fc.option(fc.constantFrom('http://127.0.0.1:9/hook', 'https://example.invalid/x?y=1#z', 'http://[::1]:9/'), { nil: undefined }),
  })
  .map(({ model, mlp, transformer, priority, metadata, deadline, webhook }) => {
    const body: JobBody = { model, inputs: model.startsWith('mlp') ? [mlp] : transformer };
    if (priority) body.priority = priority;
    if (metadata) body.metadata = metadata;
    if (deadline) body.deadline = deadline;
    if (webhook) body.webhook = { url: webhook };
    return body;
  });

const tensorsOf = (body: JobBody) => body.inputs as Tensor[];
/** A copy of the body whose tensor `i` (modulo the count) is replaced by `change(tensor)`. */
const withTensor = (body: JobBody, i: number, change: (t: Tensor) => Tensor): JobBody => {
  const tensors = tensorsOf(body).map((t) => ({ ...t }));
  const k = i % tensors.length;
  tensors[k] = change(tensors[k]!);
  return { ...body, inputs: tensors };
};
const elementCount = (t: Tensor) => (t.shape as number[]).reduce((a, b) => a * b, 1);
const flatData = (t: Tensor): unknown[] => {
  if (typeof t.data === 'string') {
    const bytes = Buffer.from(t.data, 'base64');
    return t.datatype === 'FP32'
      ? Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4))
      : Array.from(new BigInt64Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 8), String);
  }
  return (t.data as unknown[]).flat(Infinity);
};
const byteLength = (t: Tensor) => elementCount(t) * (t.datatype === 'FP32' ? 4 : 8);

/** Elements no datatype of the tensor accepts (the demo models take FP32 and INT64). */
const badElement = (datatype: unknown): fc.Arbitrary<unknown> =>
  datatype === 'FP32'
    ? fc.constantFrom(
        '1',
        'NaN',
        'Infinity',
        '-0',
        '',
        null,
        true,
        {},
        [],
        [[]],
        new RawJson('NaN'),
        new RawJson('Infinity'),
        new RawJson('-Infinity'),
        new RawJson('+1'),
        new RawJson('.5'),
        new RawJson('1.e3'),
        new RawJson('01'),
        new RawJson('"\\ud800"'),
        // Numbers that round to ±Infinity in FP32, or that JSON.parse already reads as Infinity.
        1e308,
        -3.5e38,
        new RawJson('1e400'),
        new RawJson('-1e400'),
      )
    : fc.constantFrom(
        1.5,
        -0.5,
        2 ** 53,
        2 ** 64,
        1e300,
        '1.5',
        '1e3',
        ' 1',
        '0x10',
        '',
        'abc',
        '99999999999999999999',
        '18446744073709551616',
        '-9223372036854775809',
        null,
        true,
        {},
        [],
        new RawJson('NaN'),
        new RawJson('9007199254740993'),
        new RawJson('1e999'),
      );

const base64Garbage = (t: Tensor): fc.Arbitrary<string> => {
  const bytes = byteLength(t);
  return fc.oneof(
    // The right alphabet, the wrong byte count.
    fc
      .integer({ min: 0, max: bytes + 64 })
      .filter((n) => n !== bytes)
      .map((n) => Buffer.alloc(n, 7).toString('base64')),
    // The right length with one character outside the alphabet (base64url, whitespace, padding mid-string, non-ASCII).
    fc.tuple(fc.nat(), fc.constantFrom('-', '_', ' ', '\n', '\t', '=', '!', '.', 'é', '\u0000', '😀')).map(([at, c]) => {
      const text = Buffer.alloc(bytes, 0x41).toString('base64');
      const i = at % Math.max(1, text.length - 2);
      return `${text.slice(0, i)}${c}${text.slice(i + 1)}`;
    }),
    hostileString.filter((s) => s.length % 4 !== 0 || s.length === 0 || /[^A-Za-z0-9+/=]/.test(s)),
  );
};

/** Data that cannot match the tensor: wrong count, bad elements, too deep, not data at all, base64 garbage. */
const badData = (t: Tensor): fc.Arbitrary<unknown> => {
  const flat = flatData(t);
  return fc.oneof(
    fc
      .integer({ min: -flat.length, max: 64 })
      .filter((k) => k !== 0)
      .map((k) => (k < 0 ? flat.slice(0, flat.length + k) : [...flat, ...Array(k).fill(0)])),
    fc.tuple(fc.nat(), badElement(t.datatype)).map(([i, bad]) => flat.map((v, k) => (k === i % flat.length ? bad : v))),
    fc.constantFrom(65, 100, 1_000, 10_000).map((depth) => nestedArrayText(depth)),
    fc.constantFrom({}, { 0: 1 }, 5, true, null, new RawJson('NaN')),
    base64Garbage(t),
  );
};

/** Shapes that do not fit the tensor's data or signature. */
const badShape = (t: Tensor): fc.Arbitrary<unknown> => {
  const shape = t.shape as number[];
  const at = (i: number, v: unknown) => shape.map((d, k) => (k === i % shape.length ? v : d));
  return fc.oneof(
    fc.tuple(fc.nat(), badNumber).map(([i, v]) => at(i, v)),
    fc.tuple(fc.nat(), hugeDim).map(([i, v]) => at(i, v)),
    fc
      .tuple(fc.nat(), fc.integer({ min: 0, max: 10_000 }))
      .filter(([i, v]) => shape[i % shape.length] !== v)
      .map(([i, v]) => at(i, v)),
    fc.constantFrom([], [1], [1, 1, 1], Array(17).fill(1), [2 ** 26, 2 ** 26, 2 ** 26], [new RawJson('-0'), 64], [0, 64]),
    fc.constantFrom('1,64', 64, null, {}, [[1, 64]], new RawJson('[1,64,]')),
  );
};

const hostileKey = fc.oneof(fc.constantFrom('__proto__', 'constructor', 'prototype', 'extra', 'Model', 'inputs ', ''), hostileString);

/** One change that makes a valid body invalid. */
const mutation: fc.Arbitrary<{ what: string; apply: (body: JobBody) => fc.Arbitrary<JobBody> }> = fc.constantFrom(
  {
    what: 'model',
    apply: (b: JobBody) =>
      fc
        .oneof(
          hostileString.filter((s) => !/^(mlp|transformer)(:1)?$/.test(s)),
          badNumber,
        )
        .map((model) => ({ ...b, model })),
  },
  { what: 'no model', apply: (b: JobBody) => fc.constant((({ model: _m, ...rest }) => rest as JobBody)(b)) },
  {
    what: 'datatype',
    apply: (b: JobBody) =>
      fc
        .tuple(fc.nat(), fc.oneof(fc.constantFrom<unknown>(...DATATYPES, 'BYTES', 'fp32', 'FLOAT', 'FP32 ', 'INT64\u0000'), hostileString, badNumber))
        .filter(([i, datatype]) => tensorsOf(b)[i % tensorsOf(b).length]!.datatype !== datatype)
        .map(([i, datatype]) => withTensor(b, i, (t) => ({ ...t, datatype }))),
  },
  {
    what: 'shape',
    apply: (b: JobBody) => fc.nat().chain((i) => badShape(tensorsOf(b)[i % tensorsOf(b).length]!).map((shape) => withTensor(b, i, (t) => ({ ...t, shape })))),
  },
  {
    what: 'data',
    apply: (b: JobBody) => fc.nat().chain((i) => badData(tensorsOf(b)[i % tensorsOf(b).length]!).map((data) => withTensor(b, i, (t) => ({ ...t, data })))),
  },
  {
    what: 'tensor name',
    apply: (b: JobBody) =>
      fc
        .tuple(
          fc.nat(),
          hostileString.filter((s) => !['features', 'input_ids', 'attention_mask'].includes(s)),
        )
        .map(([i, name]) => withTensor(b, i, (t) => ({ ...t, name }))),
  },
  {
    what: 'tensor field',
    apply: (b: JobBody) =>
      fc
        .tuple(
          fc.nat(),
          hostileKey.filter((k) => !['name', 'datatype', 'shape', 'data'].includes(k)),
          fc.jsonValue({ maxDepth: 2 }),
        )
        .map(([i, key, value]) => withTensor(b, i, (t) => ({ ...t, [key]: value }))),
  },
  {
    what: 'tensor field missing',
    apply: (b: JobBody) =>
      fc
        .tuple(fc.nat(), fc.constantFrom('name', 'datatype', 'shape', 'data'))
        .map(([i, key]) => withTensor(b, i, (t) => (({ [key]: _drop, ...rest }) => rest)(t))),
  },
  {
    what: 'inputs',
    apply: (b: JobBody) =>
      fc
        .constantFrom<unknown>(
          [],
          {},
          'features',
          null,
          1,
          [null],
          [1],
          ['x'],
          [[]],
          Array(65).fill(tensorsOf(b)[0]),
          [...tensorsOf(b), tensorsOf(b)[0]],
          tensorsOf(b).slice(1),
        )
        .map((inputs) => ({ ...b, inputs })),
  },
  {
    what: 'body field',
    apply: (b: JobBody) =>
      fc
        .tuple(
          hostileKey.filter((k) => !['model', 'inputs', 'priority', 'metadata', 'deadline', 'webhook'].includes(k)),
          fc.jsonValue({ maxDepth: 2 }),
        )
        .map(([key, value]) => ({ ...b, [key]: value })),
  },
  {
    what: 'priority',
    apply: (b: JobBody) =>
      fc
        .oneof(hostileString, badNumber)
        .filter((p) => !(PRIORITIES as readonly unknown[]).includes(p))
        .map((priority) => ({ ...b, priority })),
  },
  {
    what: 'metadata',
    apply: (b: JobBody) =>
      fc
        .oneof(
          fc.constantFrom<unknown>(
            'x',
            [],
            ['a'],
            1,
            { a: {} },
            { a: [] },
            { a: { b: 'c' } },
            Object.fromEntries(Array.from({ length: 33 }, (_, i) => [`k${i}`, 'v'])),
            { ['k'.repeat(65)]: 'v' },
            { k: 'v'.repeat(1025) },
          ),
          // Keys a `.*` key pattern would skip, with values that are not strings; keys Postgres cannot store.
          fc
            .tuple(fc.constantFrom('\n', '\r', '\u2028', 'a'), fc.constantFrom<unknown>({ nested: [1, { deep: true }] }, ['v'], {}))
            .map(([key, value]) => ({ [key]: value })),
          fc
            .tuple(fc.constantFrom('\u0000', '\ud800', 'a\udfff', '\u0000a'), fc.constantFrom<unknown>('v', { nested: [] }))
            .map(([key, value]) => ({ [key]: value })),
          fc.constantFrom('\u0000', 'x\u0000y', '\ud800', '\udc00x', 'x\ud83d').map((value) => ({ k: value })),
        )
        .map((metadata) => ({ ...b, metadata })),
  },
  {
    what: 'deadline',
    apply: (b: JobBody) =>
      fc
        .oneof(
          hostileDateTime.filter((s) => !(Date.parse(s) > Date.now() + 86_400_000 && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(s))),
          fc.date({ min: new Date('0001-01-01T00:00:00Z'), max: new Date(Date.now() - 60_000), noInvalidDate: true }).map((d) => d.toISOString()),
          badNumber,
        )
        .map((deadline) => ({ ...b, deadline })),
  },
  {
    what: 'webhook',
    apply: (b: JobBody) =>
      fc
        .oneof(
          fc.constantFrom(
            'javascript:alert(1)',
            'file:///etc/passwd',
            'ftp://127.0.0.1/x',
            'gopher://127.0.0.1:6379/_FLUSHALL',
            'http://',
            'http:/x',
            'http://[::1',
            'mlp:1',
            'data:text/plain,hi',
            `http://x/${'a'.repeat(2100)}`,
            'http://a b/',
            'http://127.0.0.1/\u0000',
          ),
          hostileString,
        )
        .map((url) => ({ ...b, webhook: { url } })),
  },
  {
    what: 'webhook shape',
    apply: (b: JobBody) =>
      fc.constantFrom<unknown>('http://127.0.0.1/', null, [], {}, { url: 'http://127.0.0.1/', secret: 'x' }, { url: 5 }).map((webhook) => ({ ...b, webhook })),
  },
);

/** A valid body with one hostile change: always to be refused. */
export const invalidJobBody: fc.Arbitrary<{ what: string; body: JobBody }> = fc
  .tuple(validJobBody, mutation)
  .chain(([body, m]) => m.apply(body).map((mutated) => ({ what: m.what, body: mutated })));

/** Raw bodies that are not JSON at all, or not the JSON they claim: always to be refused. */
export const brokenJsonText = (validText: fc.Arbitrary<string>): fc.Arbitrary<string | Buffer> =>
  fc.oneof(
    validText.chain((text) => fc.integer({ min: 0, max: text.length - 1 }).map((n) => text.slice(0, n))),
    validText.chain((text) =>
      fc
        .constantFrom('NaN', 'Infinity', '-Infinity', 'undefined', '01', '+1', '.5', "'x'", '0x1F', '1_0')
        .map((bad) => text.replace(/"shape":\[\d+/, `"shape":[${bad}`)),
    ),
    validText.map((text) => text.replace('"model"', "'model'")),
    validText.map((text) => text.replace(/"model":"[^"]*"/, '"model":"mlp\u0001"')),
    validText.map((text) =>
      Buffer.concat([
        Buffer.from(text.replace(/"model":"[^"]*"/, '"model":"')),
        Buffer.from([0xc3, 0x28, 0xff, 0xfe]),
        Buffer.from(text.replace(/^.*?"model":"[^"]*/, '')),
      ]),
    ),
    validText.map((text) => `${text}${text}`),
    validText.map((text) => `${text},`),
    fc.constantFrom(
      '',
      ' ',
      'null',
      'true',
      '0',
      '"x"',
      '[]',
      '{}',
      '[{}]',
      '{"model":"mlp"}',
      '{"inputs":[]}',
      '{"__proto__":{"admin":true},"model":"mlp","inputs":[]}',
      '{"constructor":{"prototype":{"admin":true}},"model":"mlp","inputs":[]}',
      '{"model":"mlp","inputs":[{"name":"features","datatype":"FP32","shape":[1,64],"data":"\\ud800"}]}',
      `{"model":${nestedArrayText(100_000).text}}`,
    ),
    fc.uint8Array({ minLength: 1, maxLength: 512 }).map((b) => Buffer.from(b)),
    fc.string({ unit: 'binary', maxLength: 200 }),
  );
