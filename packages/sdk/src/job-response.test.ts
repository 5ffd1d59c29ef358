import { describe, expect, it } from 'vitest';
import { createClient, type FetchLike } from './index.ts';

const job = { id: 'j1', model: 'mlp', version: 1, status: 'succeeded', createdAt: '2026-01-01T00:00:00Z' };

function framed(header: object, sections: Uint8Array[]): Response {
  const json = new TextEncoder().encode(JSON.stringify(header));
  return new Response(new Blob([json, ...sections] as BlobPart[]), {
    headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(json.byteLength) },
  });
}

function clientAnswering(answer: (url: string, headers: Headers) => Response) {
  const asked: { url: string; accept: string | null }[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    const headers = new Headers(init.headers);
    asked.push({ url, accept: headers.get('accept') });
    return answer(url, headers);
  };
  return { asked, client: createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch }) };
}

describe('reading outputs binary', () => {
  it('asks for the framed job and decodes each output into its typed array', async () => {
    const logits = new Float32Array([0.5, -1, 2]);
    const ids = new BigInt64Array([2n ** 60n]);
    const outputs = [
      { name: 'logits', datatype: 'FP32', shape: [1, 3], bytes: 12, parameters: { binary_data_size: 12 } },
      { name: 'ids', datatype: 'INT64', shape: [1], bytes: 8, parameters: { binary_data_size: 8 } },
    ];
    const { asked, client } = clientAnswering(() => framed({ ...job, outputs }, [new Uint8Array(logits.buffer), new Uint8Array(ids.buffer)]));
    const got = await client.jobs.get('j1', { binary: true });
    expect(asked[0]!.accept).toMatch(/^application\/octet-stream/);
    expect(got.outputs).toEqual([
      { name: 'logits', datatype: 'FP32', shape: [1, 3], bytes: 12, values: logits },
      { name: 'ids', datatype: 'INT64', shape: [1], bytes: 8, values: ids },
    ]);
  });

  it('reads a job with no outputs from the header alone', async () => {
    const { client } = clientAnswering(() => framed({ ...job, status: 'queued' }, []));
    expect(await client.jobs.get('j1', { binary: true })).toEqual({ ...job, status: 'queued' });
  });

  it('falls back to JSON from a server without the framed read: inline data decoded, url-only outputs downloaded', async () => {
    const raw = new Uint8Array(new Int32Array([4, 5]).buffer);
    const outputs = [
      { name: 'a', datatype: 'FP32', shape: [2], bytes: 8, data: [1, 2] },
      { name: 'b', datatype: 'INT32', shape: [2], bytes: 8, url: 'http://s3.test/b' },
    ];
    const { asked, client } = clientAnswering((url) => (url.endsWith('/outputs/1') ? new Response(raw) : Response.json({ ...job, outputs })));
    const got = await client.jobs.wait('j1', { timeoutMs: 1000, binary: true });
    expect(got.outputs?.map((o) => o.values)).toEqual([new Float32Array([1, 2]), new Int32Array([4, 5])]);
    expect(asked.map((a) => a.url)).toEqual(['http://api.test/v1/jobs/j1', 'http://api.test/v1/jobs/j1/outputs/1']);
  });

  it('keeps JSON reads as they were without binary', async () => {
    const { asked, client } = clientAnswering(() => Response.json({ ...job, outputs: [] }));
    expect(await client.jobs.get('j1')).toEqual({ ...job, outputs: [] });
    expect(asked[0]!.accept).toBe('application/json, application/problem+json');
  });

  it('answers a submit with wait and binary with the decoded job, or the accepted job when it is still running', async () => {
    const out = new Float32Array([3]);
    const { client } = clientAnswering(() =>
      framed({ ...job, outputs: [{ name: 'y', datatype: 'FP32', shape: [1], bytes: 4, parameters: { binary_data_size: 4 } }] }, [new Uint8Array(out.buffer)]),
    );
    const done = await client.jobs.submit({ model: 'mlp', inputs: [] }, { wait: 5, binary: true });
    expect('outputs' in done && done.outputs?.[0]?.values).toEqual(out);
    const queued = clientAnswering(() => Response.json({ id: 'j2', status: 'queued' }, { status: 202 }));
    expect(await queued.client.jobs.submit({ model: 'mlp', inputs: [] }, { wait: 5, binary: true })).toEqual({ id: 'j2', status: 'queued' });
  });
});
