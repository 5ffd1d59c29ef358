// POST /v1/jobs bodies in the binary forms (docs/api.md): framed as the binary
// data extension and multipart/form-data, valid and broken one way each. A
// broken one must be refused with a 4xx problem+json before any job exists.
import fc from 'fast-check';
import type { FuzzCase } from './fuzz-case.ts';

const IHCL = 'inference-header-content-length';

/** An mlp submit with its features as bytes: `rows` × 64 FP32. */
const mlpBytes = fc
  .record({ rows: fc.integer({ min: 1, max: 3 }), values: fc.array(fc.float({ noNaN: true }), { minLength: 192, maxLength: 192 }) })
  .map(({ rows, values }) => ({ rows, bytes: Buffer.from(Float32Array.from(values.slice(0, rows * 64)).buffer) }));

const headOf = (rows: number, extra: Record<string, unknown> = {}) => ({ name: 'features', datatype: 'FP32', shape: [rows, 64], ...extra });

function framedCase(header: object, binary: Buffer, label: string, expect: FuzzCase['expect'], claim?: (h: number, b: number) => string): FuzzCase {
  const json = Buffer.from(JSON.stringify(header));
  const payload = Buffer.concat([json, binary]);
  return {
    method: 'POST',
    url: '/v1/jobs',
    headers: { 'content-type': 'application/octet-stream', [IHCL]: claim ? claim(json.byteLength, payload.byteLength) : String(json.byteLength) },
    payload,
    expect,
    as: 'fuzzer',
    label: `framed submit: ${label}`,
  };
}

/** Framed submits: valid, or broken in the header length, a size, or the bytes. */
export const framedSubmit: fc.Arbitrary<FuzzCase> = fc.oneof(
  mlpBytes.map(({ rows, bytes }) =>
    framedCase({ model: 'mlp', inputs: [headOf(rows, { parameters: { binary_data_size: bytes.byteLength } })] }, bytes, 'valid', 'accept'),
  ),
  fc
    .tuple(
      mlpBytes,
      fc.integer({ min: -300, max: 300 }).filter((d) => d !== 0),
    )
    .map(([{ rows, bytes }, d]) =>
      framedCase(
        { model: 'mlp', inputs: [headOf(rows, { parameters: { binary_data_size: bytes.byteLength } })] },
        d < 0 ? bytes.subarray(0, Math.max(0, bytes.byteLength + d)) : Buffer.concat([bytes, Buffer.alloc(d, 1)]),
        'bytes cut or over',
        'reject',
      ),
    ),
  fc
    .tuple(mlpBytes, fc.oneof(fc.integer({ min: -5, max: 2 ** 40 }), fc.constantFrom<unknown>(1.5, '12', null, -0.5, true)))
    .filter(([{ bytes }, size]) => size !== bytes.byteLength)
    .map(([{ rows, bytes }, size]) =>
      framedCase({ model: 'mlp', inputs: [headOf(rows, { parameters: { binary_data_size: size } })] }, bytes, 'bad size', 'reject'),
    ),
  fc
    .tuple(mlpBytes, fc.constantFrom('-1', 'x', '', '1e3', '99999999999999999999'), fc.boolean())
    .map(([{ rows, bytes }, v, past]) =>
      framedCase(
        { model: 'mlp', inputs: [headOf(rows, { parameters: { binary_data_size: bytes.byteLength } })] },
        bytes,
        `header length ${v}`,
        'reject',
        (_h, b) => (past ? String(b + 1) : v),
      ),
    ),
  mlpBytes.map(({ rows, bytes }) =>
    framedCase({ model: 'mlp', inputs: [headOf(rows, { data: [0], parameters: { binary_data_size: bytes.byteLength } })] }, bytes, 'data and size', 'reject'),
  ),
);

type Part = { name: string; filename?: string; body: Buffer };
function multipartCase(parts: Part[], label: string, expect: FuzzCase['expect'], boundaryNoise = false): FuzzCase {
  const boundary = 'fuzzboundary42';
  const chunks: Buffer[] = [];
  for (const p of parts) {
    const disposition = `form-data; name="${p.name}"${p.filename ? `; filename="${p.filename}"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n\r\n`), p.body, Buffer.from('\r\n'));
  }
  if (!boundaryNoise) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return {
    method: 'POST',
    url: '/v1/jobs',
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    payload: Buffer.concat(chunks),
    expect,
    as: 'fuzzer',
    label: `multipart submit: ${label}`,
  };
}

/** Multipart submits: valid, or with a part missing, doubled, unknown, of the wrong size, out of order, or cut short. */
export const multipartSubmit: fc.Arbitrary<FuzzCase> = mlpBytes.chain(({ rows, bytes }) => {
  const request = { name: 'request', body: Buffer.from(JSON.stringify({ model: 'mlp', inputs: [headOf(rows)] })) };
  const part = (body: Buffer, name = 'input:features'): Part => ({ name, filename: 'f.bin', body });
  return fc.oneof(
    fc.constant(multipartCase([request, part(bytes)], 'valid', 'accept')),
    fc.constant(multipartCase([request], 'part missing', 'reject')),
    fc.constant(multipartCase([request, part(bytes), part(bytes)], 'part doubled', 'reject')),
    fc.string({ maxLength: 20 }).map((n) => multipartCase([request, part(bytes, `input:${n}x`)], 'unknown part', 'reject')),
    fc
      .integer({ min: -200, max: 200 })
      .filter((d) => d !== 0)
      .map((d) => multipartCase([request, part(Buffer.alloc(Math.max(0, bytes.byteLength + d), 1))], 'part size', 'reject')),
    fc.constant(multipartCase([part(bytes), request], 'request not first', 'reject')),
    fc.constant(multipartCase([request, part(bytes)], 'no closing boundary', 'reject', true)),
    fc.uint8Array({ maxLength: 200 }).map((junk) => multipartCase([{ name: 'request', body: Buffer.from(junk) }, part(bytes)], 'request not JSON', 'reject')),
  );
});
