// POST /v1/models: multipart uploads of ONNX files that are empty, cut short,
// random, lying about their lengths or declaring hostile signatures, in
// multipart bodies that are themselves well or badly framed.
import fc from 'fast-check';
import { hostileString } from './hostile-values.ts';

// Protobuf wire format, enough to write ModelProto by hand.
const varint = (value: number | bigint): number[] => {
  const out: number[] = [];
  let v = BigInt.asUintN(64, BigInt(value));
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  return [...out, Number(v)];
};
const tag = (field: number, wireType: number) => varint(field * 8 + wireType);
const len = (field: number, body: number[]) => [...tag(field, 2), ...varint(body.length), ...body];
const int = (field: number, value: number | bigint) => [...tag(field, 0), ...varint(value)];

/** Raw UTF-8 of a string, or bytes that are not UTF-8 (CESU-8 surrogates, overlongs, NUL). */
const nameBytes: fc.Arbitrary<number[]> = fc.oneof(
  hostileString.map((s) => [...Buffer.from(s, 'utf8')]),
  fc.constantFrom<number[]>([0xed, 0xa0, 0x80], [0x78, 0x00], [0x00], [0xc0, 0x80], [0xff, 0xfe], [0xf4, 0x90, 0x80, 0x80], [0x78], [0x79]),
  fc.uint8Array({ maxLength: 40 }).map((b) => [...b]),
);

const dim = fc.oneof(
  fc
    .oneof(fc.integer({ min: -2, max: 1024 }), fc.constantFrom(0, 2 ** 31, 2 ** 53, 2n ** 63n - 1n, -(2n ** 63n), 2n ** 64n - 1n))
    .map((v) => len(1, int(1, v))),
  nameBytes.map((p) => len(1, len(2, p))),
  fc.constant(len(1, [])),
);

// Mostly well-typed dense tensors, so the name and dims get to be stored.
const valueInfo = fc
  .record({
    name: nameBytes,
    elemType: fc.oneof({ arbitrary: fc.constantFrom(1, 7), weight: 3 }, fc.integer({ min: 0, max: 17 }), fc.constantFrom(2 ** 31 - 1, -1, 2 ** 32)),
    dims: fc.option(fc.array(dim, { maxLength: 20 }), { nil: undefined, freq: 8 }),
    kind: fc.oneof({ arbitrary: fc.constant(1), weight: 6 }, fc.constantFrom(4, 5, 8, 9, 99)),
  })
  .map(({ name, elemType, dims, kind }) => {
    const tensorType = [...int(1, elemType), ...(dims ? len(2, dims.flat()) : [])];
    return len(1, name).concat(len(2, len(kind, kind === 1 ? tensorType : [])));
  });

/** A small, well-framed ModelProto whose graph inputs and outputs are hostile: names, types, dims, ranks. */
const hostileSignatureModel = fc
  .record({
    inputs: fc.array(valueInfo, { minLength: 1, maxLength: 3 }),
    outputs: fc.array(valueInfo, { minLength: 1, maxLength: 3 }),
  })
  .map(({ inputs, outputs }) =>
    Uint8Array.from([
      ...int(1, 8),
      ...len(8, int(2, 17)),
      ...len(7, [...inputs.flatMap((v) => [...tag(11, 2), ...varint(v.length), ...v]), ...outputs.flatMap((v) => [...tag(12, 2), ...varint(v.length), ...v])]),
    ]),
  );

/** Bytes that lie about lengths or use field numbers and wire types no ONNX writer emits. */
const lyingProtobuf = fc.oneof(
  fc.constantFrom(2 ** 31, 2 ** 32 - 1, 2 ** 53, 10_000_000).map((declared) => Uint8Array.from([...int(1, 8), ...tag(7, 2), ...varint(declared), 1, 2, 3])),
  fc
    .constantFrom(2 ** 31, 1_000_000)
    .map((declared) => Uint8Array.from([...int(1, 8), ...len(8, int(2, 17)), ...tag(7, 2), ...varint(declared + 8), ...tag(11, 2), ...varint(declared), 0x0a])),
  fc
    .integer({ min: 1, max: 2 ** 29 - 1 })
    .chain((field) =>
      fc
        .constantFrom(0, 1, 2, 3, 4, 5, 6, 7)
        .map((wt) => Uint8Array.from([...tag(field, wt), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01])),
    ),
  fc.constant(Uint8Array.from([...int(1, 8), ...Array(12).fill(0xff)])),
  fc.constant(Uint8Array.from(Array(11).fill(0x80))),
);

/** `valid`: a servable model; `maybe`: bytes that could parse as one; `invalid`: never a model. */
export type UploadFile = { bytes: Uint8Array; is: 'valid' | 'maybe' | 'invalid' };

/** Files for the `file` part. */
const onnxFile = (model: Uint8Array): fc.Arbitrary<UploadFile> =>
  fc.oneof(
    { arbitrary: fc.constant<UploadFile>({ bytes: model, is: 'valid' }), weight: 1 },
    { arbitrary: fc.constant<UploadFile>({ bytes: new Uint8Array(0), is: 'invalid' }), weight: 1 },
    { arbitrary: fc.integer({ min: 1, max: model.byteLength - 1 }).map((n): UploadFile => ({ bytes: model.subarray(0, n), is: 'maybe' })), weight: 3 },
    { arbitrary: fc.uint8Array({ minLength: 1, maxLength: 4096 }).map((bytes): UploadFile => ({ bytes, is: 'maybe' })), weight: 2 },
    { arbitrary: lyingProtobuf.map((bytes): UploadFile => ({ bytes, is: 'invalid' })), weight: 2 },
    { arbitrary: hostileSignatureModel.map((bytes): UploadFile => ({ bytes, is: 'maybe' })), weight: 4 },
    {
      arbitrary: fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, b]): UploadFile => {
        const bytes = Uint8Array.from(model);
        bytes[at % bytes.length] = b;
        return { bytes, is: 'maybe' };
      }),
      weight: 2,
    },
  );

/** Model names the upload must refuse. */
const badModelName = fc
  .oneof(hostileString, fc.constantFrom('MLP', '-mlp', '.mlp', 'a'.repeat(64), 'a/b', 'a b', 'mlp:1', 'é'))
  .filter((s) => !/^[a-z0-9][a-z0-9._-]{0,62}$/.test(s));

/** A batching field whose valid range is [min, max]. */
const batchField = (min: number, max: number) => ({
  ok: fc.integer({ min, max }).map(String),
  bad: fc.constantFrom(String(min - 1), String(max + 1), '1.5', 'NaN', 'Infinity', '-Infinity', '1e999', '', 'abc', '99999999999999999999', '1,2', '\u0000'),
});
const maxBatchSize = batchField(1, 4096);
const maxBatchDelayMs = batchField(0, 60_000);
const latencyTargetMs = batchField(1, 600_000);
const badBatchingMode = fc
  .oneof(hostileString, fc.constantFrom('AUTO', 'Fixed', 'adaptive', 'true', ' auto', 'auto\u0000'))
  .filter((s) => s !== 'fixed' && s !== 'auto');

export interface MultipartRequest {
  payload: Buffer;
  contentType: string;
  expect: 'reject' | 'accept' | 'any';
  label: string;
}

const CRLF = '\r\n';
function frame(boundary: string, fields: Array<[string, string]>, files: Array<[string, Uint8Array]>): Buffer {
  const parts: Buffer[] = [];
  for (const [k, v] of fields) parts.push(Buffer.from(`--${boundary}${CRLF}Content-Disposition: form-data; name="${k}"${CRLF}${CRLF}${v}${CRLF}`));
  for (const [k, bytes] of files) {
    parts.push(
      Buffer.from(
        `--${boundary}${CRLF}Content-Disposition: form-data; name="${k}"; filename="m.onnx"${CRLF}Content-Type: application/octet-stream${CRLF}${CRLF}`,
      ),
      Buffer.from(bytes),
      Buffer.from(CRLF),
    );
  }
  parts.push(Buffer.from(`--${boundary}--${CRLF}`));
  return Buffer.concat(parts);
}

/** One thing wrong with an otherwise well-formed upload, or nothing, so the file reaches the ONNX reader. */
const uploadChange = fc.oneof(
  { arbitrary: fc.constant({ kind: 'none' as const }), weight: 6 },
  badModelName.map((value) => ({ kind: 'name' as const, value })),
  fc
    .constantFrom('maxBatchSize', 'maxBatchDelayMs')
    .chain((field) => (field === 'maxBatchSize' ? maxBatchSize : maxBatchDelayMs).bad.map((value) => ({ kind: 'field' as const, field, value }))),
  badBatchingMode.map((value) => ({ kind: 'field' as const, field: 'batching', value })),
  // Set after the valid fields, so batching is auto unless the target comes without it.
  latencyTargetMs.bad.map((value) => ({ kind: 'field' as const, field: 'latencyTargetMs', value })),
  fc.tuple(fc.constantFrom(undefined, 'fixed'), latencyTargetMs.ok).map(([mode, value]) => ({ kind: 'target without auto' as const, mode, value })),
  fc.constantFrom('extra', '__proto__', 'constructor', 'file', 'name ').map((field) => ({ kind: 'extra field' as const, field })),
  fc
    .constantFrom('no file', 'two files', 'file field misnamed', 'truncated', 'no boundary', 'wrong boundary', 'eleven fields', 'not multipart')
    .map((kind) => ({ kind })),
);

/** A multipart upload of any file under a valid name and batching fields, with at most one thing wrong with the rest. */
export const modelUpload = (model: Uint8Array, names: fc.Arbitrary<string>): fc.Arbitrary<MultipartRequest> =>
  fc
    .record({
      name: names,
      maxBatchSize: fc.option(maxBatchSize.ok, { nil: undefined, freq: 2 }),
      maxBatchDelayMs: fc.option(maxBatchDelayMs.ok, { nil: undefined, freq: 2 }),
      // A target only with auto: the target alone is a change of its own.
      batching: fc.option(
        fc.oneof(
          fc.constant<[string, string | undefined]>(['fixed', undefined]),
          fc.option(latencyTargetMs.ok, { nil: undefined }).map((target): [string, string | undefined] => ['auto', target]),
        ),
        { nil: undefined, freq: 2 },
      ),
      file: onnxFile(model),
      change: uploadChange,
      cut: fc.nat(),
    })
    .map(({ name, maxBatchSize: size, maxBatchDelayMs: delay, batching, file, change, cut }) => {
      const boundary = 'fuzzBoundary7f3a';
      const fields = new Map<string, string>([['name', change.kind === 'name' ? change.value : name]]);
      if (size !== undefined) fields.set('maxBatchSize', size);
      if (delay !== undefined) fields.set('maxBatchDelayMs', delay);
      if (batching) fields.set('batching', batching[0]);
      if (batching?.[1] !== undefined) fields.set('latencyTargetMs', batching[1]);
      if (change.kind === 'field') {
        if (change.field === 'latencyTargetMs') fields.set('batching', 'auto');
        fields.set(change.field, change.value);
      }
      if (change.kind === 'target without auto') {
        if (change.mode === undefined) fields.delete('batching');
        else fields.set('batching', change.mode);
        fields.set('latencyTargetMs', change.value);
      }
      const list = [...fields];
      if (change.kind === 'extra field') list.push([change.field, 'x']);
      if (change.kind === 'eleven fields') for (let i = 0; i < 11; i++) list.push([`f${i}`, 'x']);
      const files: Array<[string, Uint8Array]> =
        change.kind === 'no file'
          ? []
          : change.kind === 'two files'
            ? [
                ['file', file.bytes],
                ['file', file.bytes],
              ]
            : [[change.kind === 'file field misnamed' ? 'model' : 'file', file.bytes]];
      let payload = frame(boundary, list, files);
      if (change.kind === 'truncated') payload = payload.subarray(0, cut % (payload.length - 8));
      const contentType =
        change.kind === 'no boundary'
          ? 'multipart/form-data'
          : change.kind === 'wrong boundary'
            ? 'multipart/form-data; boundary=other'
            : change.kind === 'not multipart'
              ? 'application/octet-stream'
              : `multipart/form-data; boundary=${boundary}`;
      const expect = change.kind !== 'none' || file.is === 'invalid' ? 'reject' : file.is === 'valid' ? 'accept' : 'any';
      return { payload, contentType, expect, label: `upload of a ${file.is} file, ${change.kind === 'none' ? 'nothing else wrong' : change.kind}` };
    });
