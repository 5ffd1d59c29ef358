// BYTES (ONNX string) tensors end to end: JSON strings and base64 framing in
// through /v1/jobs and /v2 infer, through the batcher and onnxruntime's string
// tensors, stored framed (inline and in S3), and back out as strings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeBytesStrings, encodeBase64, encodeBytesElements, encodeInferRequest, parseInferResponseBody } from '@inferq/contracts';
import { ADMIN_KEY, startStack, waitFor, type Stack } from '@inferq/test-utils';

let stack: Stack;
beforeAll(async () => {
  // 64 bytes inline: short outputs stay in Postgres, longer ones go to S3; 4 KiB of inputs at most.
  stack = await startStack({ apiEnv: { WAIT_MAX_S: '30', INPUT_MAX_BYTES: '4096', INLINE_TENSOR_MAX_BYTES: '64' } });
  await stack.registerModel('labels', { maxBatchDelayMs: '50' });
  await stack.startWorker({ INLINE_TENSOR_MAX_BYTES: '64' });
  await waitFor(async () => (await stack.request('GET', '/v2/models/labels/ready')).status === 200, { intervalMs: 100, what: 'labels to be ready' });
});
afterAll(() => stack?.close());

const submit = (inputs: unknown[]) => stack.request('POST', '/v1/jobs', { model: 'labels', inputs }, { prefer: 'wait=30' });
const words = (rows: string[][]) => ({ name: 'words', datatype: 'BYTES', shape: [rows.length, rows[0]!.length], data: rows });
const CLASS = { cat: 'animal', dog: 'animal', pine: 'plant', fern: 'plant' } as Record<string, string>;
const ID = { cat: 0, dog: 1, pine: 5, fern: 7 } as Record<string, number>;

async function rawOutput(id: string, index: number): Promise<Uint8Array> {
  const res = await fetch(`${stack.baseUrl}/v1/jobs/${id}/outputs/${index}`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
  expect(res.status).toBe(200);
  return new Uint8Array(await res.arrayBuffer());
}

describe('BYTES tensors through /v1/jobs', () => {
  it('takes JSON strings and gives back strings, the ids and the classes the model looks up', async () => {
    const rows = [
      ['cat', 'héllo'],
      ['', '日本 🌲'],
    ];
    const res = await submit([words(rows)]);
    expect(res.status).toBe(200);
    expect(res.json.status).toBe('succeeded');
    expect(res.json.inputs).toEqual([{ name: 'words', datatype: 'BYTES', shape: [2, 2], bytes: encodeBytesElements(rows.flat()).byteLength }]);
    const [echo, ids, classes] = res.json.outputs;
    expect(echo).toMatchObject({ name: 'echo', datatype: 'BYTES', shape: [2, 2], data: rows.flat() });
    expect(ids).toMatchObject({ name: 'ids', datatype: 'INT64', shape: [2, 2], data: [0, -1, -1, -1] });
    expect(classes).toMatchObject({ name: 'classes', datatype: 'BYTES', shape: [2, 2], data: ['animal', '<unk>', '<unk>', '<unk>'] });
    // base64 encoding of a BYTES output is the framed elements.
    const b64 = await stack.request('GET', `/v1/jobs/${res.json.id}?encoding=base64`);
    expect(b64.json.outputs[0].data).toBe(encodeBase64(encodeBytesElements(rows.flat())));
  });

  it('takes base64 of the framed elements, and keeps a long output framed in S3', async () => {
    const long = ['x'.repeat(40), 'dog', 'y'.repeat(30), 'pine'];
    const res = await submit([{ name: 'words', datatype: 'BYTES', shape: [1, 4], data: encodeBase64(encodeBytesElements(long)) }]);
    expect(res.json.status).toBe('succeeded');
    const echo = res.json.outputs[0];
    expect(echo).toMatchObject({ name: 'echo', url: expect.any(String), bytes: encodeBytesElements(long).byteLength });
    expect(decodeBytesStrings(await rawOutput(res.json.id, 0))).toEqual(long);
    expect(res.json.outputs[2].data ?? decodeBytesStrings(await rawOutput(res.json.id, 2))).toEqual(['<unk>', 'animal', '<unk>', 'plant']);
  });

  it('answers the framed job (Accept: application/octet-stream) with BYTES outputs in the extension framing, inline and from S3', async () => {
    const rows = [['pine', 'z'.repeat(50)]];
    const res = await submit([words(rows)]);
    expect(res.json.status).toBe('succeeded');
    const framed = await fetch(`${stack.baseUrl}/v1/jobs/${res.json.id}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}`, accept: 'application/octet-stream' },
    });
    expect(framed.status).toBe(200);
    const parsed = parseInferResponseBody(new Uint8Array(await framed.arrayBuffer()), Number(framed.headers.get('inference-header-content-length')));
    if (!parsed.ok || !parsed.value.header) throw new Error(JSON.stringify(parsed));
    const [echo, ids, classes] = parsed.value.tensors;
    expect(decodeBytesStrings(echo!)).toEqual(rows.flat());
    expect(Array.from(new BigInt64Array(ids!.slice().buffer))).toEqual([5n, -1n]);
    expect(decodeBytesStrings(classes!)).toEqual(['plant', '<unk>']);
  });

  it('batches jobs of different row counts and gives each its own rows', async () => {
    const vocab = Object.keys(CLASS);
    const jobs = Array.from({ length: 6 }, (_, j) => Array.from({ length: 1 + (j % 3) }, (_, r) => [vocab[(j + r) % 4]!, `job ${j} row ${r}`]));
    const results = await Promise.all(jobs.map((rows) => submit([words(rows)])));
    results.forEach((res, j) => {
      const flat = jobs[j]!.flat();
      expect(res.json.status, `job ${j}`).toBe('succeeded');
      const [echo, ids, classes] = res.json.outputs;
      expect(echo.data ?? null, `job ${j}`).toEqual(echo.url ? null : flat);
      expect(ids.data).toEqual(flat.map((w) => ID[w] ?? -1));
      if (classes.data) expect(classes.data).toEqual(flat.map((w) => CLASS[w] ?? '<unk>'));
    });
  });

  it('refuses non-strings, bytes that are not UTF-8, broken framing and inputs over the limit, naming what is wrong', async () => {
    const notString = await submit([words([['cat', 7 as unknown as string]])]);
    expect(notString.status).toBe(400);
    expect(notString.json).toMatchObject({ code: 'INPUT_DATA_INVALID', errors: [{ pointer: '/inputs/0/data/0/1' }] });
    const latin1 = encodeBytesElements(['cat', new Uint8Array([0x63, 0xe9])]);
    const notUtf8 = await submit([{ name: 'words', datatype: 'BYTES', shape: [1, 2], data: encodeBase64(latin1) }]);
    expect(notUtf8.status).toBe(400);
    expect(notUtf8.json).toMatchObject({ code: 'INPUT_DATA_INVALID', errors: [{ pointer: '/inputs/0/data/1', detail: expect.stringContaining('UTF-8') }] });
    const short = await submit([{ name: 'words', datatype: 'BYTES', shape: [1, 3], data: encodeBase64(encodeBytesElements(['a', 'b'])) }]);
    expect(short.json).toMatchObject({ status: 400, code: 'INPUT_DATA_INVALID' });
    const tooMany = await submit([words([['a'.repeat(2000), 'b'.repeat(2100)]])]);
    expect(tooMany.json).toMatchObject({ status: 413, code: 'INPUT_TOO_LARGE' });
  });
});

describe('BYTES tensors through /v2 infer', () => {
  it('takes and gives JSON strings, as Triton and KServe clients send them', async () => {
    const res = await stack.request('POST', '/v2/models/labels/infer', {
      id: 'strings',
      inputs: [{ name: 'words', shape: [1, 3], datatype: 'BYTES', data: ['fern', 'naïve', 'cat'] }],
      outputs: [{ name: 'classes' }, { name: 'ids' }],
    });
    expect(res.status).toBe(200);
    expect(res.json).toMatchObject({ model_name: 'labels', id: 'strings' });
    expect(res.json.outputs).toHaveLength(2);
    expect(res.json.outputs).toEqual(
      expect.arrayContaining([
        { name: 'classes', datatype: 'BYTES', shape: [1, 3], data: ['plant', '<unk>', 'animal'] },
        { name: 'ids', datatype: 'INT64', shape: [1, 3], data: [7, -1, 0] },
      ]),
    );
  });

  it('takes and gives BYTES in the binary data extension, framed; refuses binary elements that are not UTF-8', async () => {
    const post = async (inputs: Parameters<typeof encodeInferRequest>[0]['inputs']) => {
      const framed = encodeInferRequest({ inputs }, { binaryOutputs: true });
      if (!framed.ok) throw new Error(JSON.stringify(framed));
      return fetch(`${stack.baseUrl}/v2/models/labels/infer`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${ADMIN_KEY}`,
          'content-type': framed.value.contentType,
          'inference-header-content-length': String(framed.value.headerLength),
        },
        body: Buffer.from(framed.value.body),
      });
    };
    const text = ['dog', 'über', ''];
    const res = await post([{ name: 'words', datatype: 'BYTES', shape: [1, 3], data: text, binary: true }]);
    expect(res.status).toBe(200);
    const parsed = parseInferResponseBody(new Uint8Array(await res.arrayBuffer()), Number(res.headers.get('inference-header-content-length')));
    if (!parsed.ok || !parsed.value.header) throw new Error(JSON.stringify(parsed));
    const names = (parsed.value.header.outputs as { name: string }[]).map((o) => o.name);
    const output = (name: string) => parsed.value.tensors[names.indexOf(name)]!;
    expect(decodeBytesStrings(output('echo'))).toEqual(text);
    expect(decodeBytesStrings(output('classes'))).toEqual(['animal', '<unk>', '<unk>']);
    const latin1 = encodeBytesElements(['dog', new Uint8Array([0xfc, 0x62])]);
    const refused = await post([{ name: 'words', datatype: 'BYTES', shape: [1, 2], data: latin1, binary: true }]);
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ code: 'INPUT_DATA_INVALID', detail: expect.stringContaining('element 1 is not valid UTF-8') });
  });
});
