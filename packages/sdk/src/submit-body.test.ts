import { describe, expect, it } from 'vitest';
import { parseInferRequestBody } from '@inferq/contracts';
import { createClient, type FetchLike } from './index.ts';

interface Sent {
  url: string;
  method: string;
  headers: Headers;
  body: Uint8Array | undefined;
}

/** A client whose fetch records each request and answers `answer(request)` (202 accepted by default). */
function recordingClient(options: { binaryThresholdBytes?: number; uploadThresholdBytes?: number } = {}, answer?: (s: Sent) => Response) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    const body = init.body === undefined ? undefined : new Uint8Array(await new Response(init.body).arrayBuffer());
    const s = { url, method: init.method ?? 'GET', headers: new Headers(init.headers), body };
    sent.push(s);
    return answer?.(s) ?? Response.json({ id: 'j1', status: 'queued' }, { status: 202 });
  };
  return { sent, client: createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch, ...options }) };
}

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes);
const seq = (n: number) => Float32Array.from({ length: n }, (_, i) => i / 4);

describe('submit body', () => {
  it('sends an input of 4 KiB or more framed, byte for byte as the spec lays it out', async () => {
    const { sent, client } = recordingClient();
    const values = seq(1024);
    await client.jobs.submit({ model: 'mlp', priority: 'high', inputs: [{ name: 'x', shape: [1, 1024], data: values }] });
    const [req] = sent;
    const header = '{"model":"mlp","priority":"high","inputs":[{"name":"x","datatype":"FP32","shape":[1,1024],"parameters":{"binary_data_size":4096}}]}';
    expect(req!.headers.get('content-type')).toBe('application/octet-stream');
    expect(req!.headers.get('inference-header-content-length')).toBe(String(header.length));
    const expected = new Uint8Array(header.length + 4096);
    expected.set(new TextEncoder().encode(header), 0);
    expected.set(new Uint8Array(values.buffer), header.length);
    expect(req!.body).toEqual(expected);
  });

  it('puts every input of a framed body in the binary section in input order, JSON and base64 ones included', async () => {
    const { sent, client } = recordingClient();
    const big = seq(2048);
    await client.jobs.submit({
      model: 'm',
      inputs: [
        { name: 'a', datatype: 'INT32', shape: [2], data: [7, -1] },
        { name: 'b', shape: [2048], data: big },
        { name: 'c', datatype: 'UINT8', shape: [3], data: 'AQID' },
        { name: 'd', datatype: 'FP32', shape: [2], data: new Uint8Array(new Float32Array([1, 2]).buffer) },
      ],
    });
    const body = sent[0]!.body!;
    const parsed = parseInferRequestBody(body, Number(sent[0]!.headers.get('inference-header-content-length')));
    if (!parsed.ok || parsed.value.header === null) throw new Error('not framed');
    const { header, tensors } = parsed.value;
    expect((header.inputs as { parameters: unknown }[]).map((i) => i.parameters)).toEqual([
      { binary_data_size: 8 },
      { binary_data_size: 8192 },
      { binary_data_size: 3 },
      { binary_data_size: 8 },
    ]);
    expect(Array.from(new Int32Array(tensors[0]!.slice().buffer))).toEqual([7, -1]);
    expect(new Float32Array(tensors[1]!.slice().buffer)).toEqual(big);
    expect(Array.from(tensors[2]!)).toEqual([1, 2, 3]);
    expect(Array.from(new Float32Array(tensors[3]!.slice().buffer))).toEqual([1, 2]);
  });

  it('sends JSON below the threshold, as before', async () => {
    const { sent, client } = recordingClient();
    await client.jobs.submit({ model: 'm', inputs: [{ name: 'x', shape: [2], data: new Int32Array([1, 2]) }] });
    expect(sent[0]!.headers.get('content-type')).toBe('application/json');
    expect(sent[0]!.headers.get('inference-header-content-length')).toBeNull();
    expect(JSON.parse(text(sent[0]!.body))).toEqual({ model: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [2], data: [1, 2] }] });
  });

  it('takes the threshold from the client and the call: 0 always frames, Infinity never does', async () => {
    const always = recordingClient({ binaryThresholdBytes: 0 });
    await always.client.jobs.submit({ model: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [1], data: [5] }] });
    expect(always.sent[0]!.headers.get('content-type')).toBe('application/octet-stream');

    const never = recordingClient({ binaryThresholdBytes: Infinity });
    await never.client.jobs.submit({ model: 'm', inputs: [{ name: 'x', shape: [1 << 20], data: new Float32Array(1 << 20) }] });
    expect(never.sent[0]!.headers.get('content-type')).toBe('application/json');
    expect(typeof JSON.parse(text(never.sent[0]!.body)).inputs[0].data).toBe('string');

    const perCall = recordingClient();
    await perCall.client.jobs.submit({ model: 'm', inputs: [{ name: 'x', datatype: 'INT32', shape: [1], data: [5] }] }, { binaryThresholdBytes: 4 });
    expect(perCall.sent[0]!.headers.get('content-type')).toBe('application/octet-stream');
  });

  it('leaves an input the codec refuses as JSON, so the server names it', async () => {
    const { sent, client } = recordingClient({ binaryThresholdBytes: 0 });
    await client.jobs.submit({ model: 'm', inputs: [{ name: 'x', datatype: 'INT8', shape: [1], data: [300] }] });
    expect(JSON.parse(text(sent[0]!.body))).toEqual({ model: 'm', inputs: [{ name: 'x', datatype: 'INT8', shape: [1], data: [300] }] });
  });

  it('uploads an input past the upload threshold (POST /v1/uploads, PUT without the API key) and names it by id', async () => {
    const ticket = {
      id: 'up-1',
      url: 'http://s3.test/bucket/uploads/up-1?X-Amz-Signature=x',
      method: 'PUT',
      headers: { 'content-length': '64', 'content-type': 'application/octet-stream' },
      bytes: 64,
      expiresAt: '2026-01-01T00:00:00Z',
    };
    const { sent, client } = recordingClient({ uploadThresholdBytes: 64 }, (s) =>
      s.url.endsWith('/v1/uploads') ? Response.json(ticket, { status: 201 }) : s.method === 'PUT' ? new Response(null) : undefined!,
    );
    const values = seq(16);
    await client.jobs.submit({ model: 'm', inputs: [{ name: 'x', shape: [16], data: values }] });
    expect(sent.map((s) => `${s.method} ${s.url}`)).toEqual(['POST http://api.test/v1/uploads', `PUT ${ticket.url}`, 'POST http://api.test/v1/jobs']);
    expect(JSON.parse(text(sent[0]!.body))).toEqual({ datatype: 'FP32', shape: [16] });
    expect(sent[1]!.headers.get('authorization')).toBeNull();
    expect(sent[1]!.headers.get('content-length')).toBeNull(); // fetch sets it from the body
    expect(sent[1]!.body).toEqual(new Uint8Array(values.buffer));
    expect(JSON.parse(text(sent[2]!.body))).toEqual({ model: 'm', inputs: [{ name: 'x', datatype: 'FP32', shape: [16], upload: 'up-1' }] });
  });
});
