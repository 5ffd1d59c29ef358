// POST /v2/models/…/infer bodies in the binary tensor data extension: valid
// framings of an mlp request, and the same framing broken one way each (the
// header length, a binary_data_size, the bytes after the header). A broken
// framing is never valid, so it must be refused with a 4xx before any job exists.
import fc from 'fast-check';
import { encodeBytesElements, encodeInferRequest } from '@inferq/contracts';
import { badNumber, toJsonText } from './hostile-values.ts';
import type { FuzzCase } from './fuzz-case.ts';

const IHCL = 'inference-header-content-length';

/** A framed request: the JSON header (an object, edited by the mutations), the binary section, and the content type it is sent with. */
interface Framing {
  header: { inputs: Array<Record<string, unknown>>; [field: string]: unknown };
  binary: Buffer;
  contentType: string | undefined;
}

/** Content types the clients send: the C++ client's octet-stream, the Python client's none, JSON with the header length. */
const contentType = fc.constantFrom('application/octet-stream', undefined, 'application/json');

/** A valid mlp request (features FP32 [rows, 64]) framed by the contracts encoder, outputs asked for as binary or JSON. */
const validFraming: fc.Arbitrary<Framing> = fc
  .record({
    rows: fc.integer({ min: 1, max: 3 }),
    values: fc.array(fc.float({ noNaN: true, noDefaultInfinity: true }), { minLength: 192, maxLength: 192 }),
    binaryOutputs: fc.boolean(),
    contentType,
  })
  .map(({ rows, values, binaryOutputs, contentType }) => {
    const data = new Uint8Array(Float32Array.from(values.slice(0, rows * 64)).buffer);
    const framed = encodeInferRequest({ inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], data }] }, { binaryOutputs });
    if (!framed.ok) throw new Error(`the encoder refused a valid request: ${framed.detail}`);
    const { body, headerLength } = framed.value;
    const header = JSON.parse(Buffer.from(body.subarray(0, headerLength)).toString('utf8')) as Framing['header'];
    return { header, binary: Buffer.from(body.subarray(headerLength)), contentType };
  });

const features = (f: Framing) => f.header.inputs[0]!;
const sizeOf = (f: Framing) => (features(f).parameters as { binary_data_size: number }).binary_data_size;
const withSize = (f: Framing, size: unknown): Framing => ({
  ...f,
  header: { ...f.header, inputs: [{ ...features(f), parameters: { binary_data_size: size } }] },
});

/** The wire form of a framing, with the header length it claims (by default the true one). */
function toCase(url: string, f: Framing, label: string, expect: FuzzCase['expect'], claim?: (headerBytes: number, bodyBytes: number) => string): FuzzCase {
  const json = Buffer.from(toJsonText(f.header), 'utf8');
  const payload = Buffer.concat([json, f.binary]);
  const headers: Record<string, string> = { [IHCL]: claim ? claim(json.byteLength, payload.byteLength) : String(json.byteLength) };
  if (f.contentType) headers['content-type'] = f.contentType;
  return { method: 'POST', url, headers, payload, expect, as: 'fuzzer', waits: true, label };
}

/** One mutation of a valid framing, named for the label. */
const brokenFraming: fc.Arbitrary<{ what: string; framing: Framing; claim?: (headerBytes: number, bodyBytes: number) => string }> = fc.oneof(
  // Inference-Header-Content-Length: past the body, cutting the JSON short, not a non-negative integer.
  validFraming.chain((f) =>
    fc.integer({ min: 1, max: 2 ** 40 }).map((k) => ({ what: 'header length past the body', framing: f, claim: (_h: number, b: number) => String(b + k) })),
  ),
  validFraming.chain((f) =>
    fc.integer({ min: 1, max: 20 }).map((k) => ({ what: 'header length inside the JSON', framing: f, claim: (h: number) => String(h - k) })),
  ),
  fc
    .tuple(validFraming, fc.constantFrom('-1', '1.5', '1e3', '0x10', 'abc', '', ' ', '99999999999999999999', '12, 12', '+12'))
    .map(([f, v]) => ({ what: `header length ${JSON.stringify(v)}`, framing: f, claim: () => v })),
  // binary_data_size: negative, fractional, huge, not a number.
  fc.tuple(validFraming, badNumber).map(([f, size]) => ({ what: 'binary_data_size not a size', framing: withSize(f, size) })),
  // A size that disagrees with FP32 × shape, the bytes matching the size (so only the shape is wrong).
  fc
    .tuple(
      validFraming,
      fc.integer({ min: -255, max: 255 }).filter((d) => d !== 0),
    )
    .map(([f, d]) => {
      const size = Math.max(0, sizeOf(f) + d);
      return { what: 'binary_data_size disagrees with shape × datatype', framing: { ...withSize(f, size), binary: Buffer.alloc(size, 1) } };
    }),
  // Bytes missing from the end, or left after the last tensor.
  fc
    .tuple(validFraming, fc.integer({ min: 1, max: 256 }))
    .map(([f, k]) => ({ what: 'bytes missing', framing: { ...f, binary: f.binary.subarray(0, Math.max(0, f.binary.byteLength - k)) } })),
  fc
    .tuple(validFraming, fc.uint8Array({ minLength: 1, maxLength: 64 }))
    .map(([f, extra]) => ({ what: 'trailing bytes', framing: { ...f, binary: Buffer.concat([f.binary, extra]) } })),
  // Two inputs claiming the same bytes: consecutive slices need twice as many.
  validFraming.map((f) => ({
    what: 'overlapping tensors',
    framing: { ...f, header: { ...f.header, inputs: [features(f), { ...features(f), name: 'again' }] } },
  })),
  // data and binary_data_size both given.
  validFraming.map((f) => ({ what: 'data and binary_data_size', framing: { ...f, header: { ...f.header, inputs: [{ ...features(f), data: [0] }] } } })),
  // binary_data_size with no binary section at all (the JSON-only body of a client that forgot the header).
  validFraming.map((f) => ({ what: 'binary_data_size without bytes', framing: { ...f, binary: Buffer.alloc(0) } })),
  // BYTES elements whose length runs past the slice, or that leave bytes over.
  fc.tuple(validFraming, fc.integer({ min: 1, max: 2 ** 32 - 1 }), fc.constantFrom('past', 'over')).map(([f, length, how]) => {
    const section =
      how === 'past'
        ? Buffer.concat([Buffer.from(new Uint32Array([length]).buffer), Buffer.from('ab')])
        : Buffer.concat([encodeBytesElements(['ab']), Buffer.alloc(3)]);
    const text = { name: 'text', datatype: 'BYTES', shape: [1], parameters: { binary_data_size: section.byteLength } };
    return {
      what: `BYTES element ${how} the slice`,
      framing: { ...f, header: { ...f.header, inputs: [features(f), text] }, binary: Buffer.concat([f.binary, section]) },
    };
  }),
);

/** Valid binary framings of an mlp request for `url`: any answer but a 5xx (503 MODEL_UNAVAILABLE aside: no worker runs). */
const validBinaryInfer = (url: string): fc.Arbitrary<FuzzCase> => validFraming.map((f) => toCase(url, f, 'valid binary framing', 'any'));

/** Broken binary framings for `url`: each must be refused with a 4xx problem+json. */
const badBinaryFraming = (url: string): fc.Arbitrary<FuzzCase> =>
  brokenFraming.map(({ what, framing, claim }) => toCase(url, framing, `binary framing: ${what}`, 'reject', claim));

/** A body that claims a multi-GB Content-Length and sends a few bytes: refused with 413 from the headers, never read. */
const hugeClaimedBody = (url: string): fc.Arbitrary<FuzzCase> =>
  fc.tuple(validFraming, fc.constantFrom(2 ** 31, 5e9, 2 ** 40, Number.MAX_SAFE_INTEGER)).map(([f, claimed]) => {
    const c = toCase(url, f, 'multi-GB Content-Length', 'reject');
    return { ...c, headers: { ...c.headers, 'content-length': String(claimed) } };
  });

/** Every binary-framing case for one infer URL, weighted toward the broken ones. */
export const binaryInferCases = (url: string): fc.Arbitrary<FuzzCase> =>
  fc.oneof({ arbitrary: validBinaryInfer(url), weight: 3 }, { arbitrary: badBinaryFraming(url), weight: 12 }, { arbitrary: hugeClaimedBody(url), weight: 1 });
