import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parseInferResponseBody, type StoredTensor } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import { framedJob, prefersFramedJob } from './job-binary-view.ts';

const CHUNK = 64 * 1024;

function jobWith(outputs: StoredTensor[] | null): JobRecord {
  const at = new Date('2026-01-01T00:00:00Z');
  return {
    id: '0190a1b2-7c3d-7e4f-8a5b-6c7d8e9f0a1b',
    ownerKeyId: 'k',
    modelName: 'm',
    modelVersion: 1,
    priority: 'normal',
    status: outputs ? 'succeeded' : 'queued',
    idempotencyKey: null,
    requestHash: null,
    inputs: [],
    outputs,
    errorCode: null,
    errorMessage: null,
    attempts: 1,
    workerId: null,
    batchId: null,
    batchSize: null,
    createdAt: at,
    startedAt: null,
    finishedAt: null,
    queueMs: null,
    inferMs: null,
    deadlineAt: null,
    webhookUrl: null,
    metadata: {},
    inputSha256: null,
    cachedFrom: null,
    items: null,
    deviceMs: null,
    keepInputs: false,
    purgedAt: null,
    purgeReason: null,
    inputsDroppedAt: null,
  };
}

/** A tensor reader that makes `bytes` bytes per tensor lazily, in CHUNK pieces (chunk n filled with n mod 256), counting what it has made. */
function countingReader(actualBytes?: number) {
  const counter = { produced: 0, opened: 0 };
  const reader = {
    async readTensorStream(t: StoredTensor): Promise<NodeJS.ReadableStream> {
      counter.opened++;
      const total = actualBytes ?? t.bytes;
      return Readable.from(
        (function* () {
          for (let at = 0; at < total; at += CHUNK) {
            const chunk = Buffer.alloc(Math.min(CHUNK, total - at), at / CHUNK);
            counter.produced += chunk.byteLength;
            yield chunk;
          }
        })(),
      );
    },
  };
  return { counter, reader };
}

const fp32 = (name: string, bytes: number): StoredTensor => ({ name, datatype: 'FP32', shape: [bytes / 4], bytes, key: `k/${name}` });

describe('framedJob', () => {
  it('streams a large output with backpressure: what is made runs only a little ahead of what is read', async () => {
    const total = 64 * 1024 * 1024;
    const { counter, reader } = countingReader();
    const framed = framedJob(jobWith([fp32('big', total)]), reader);
    expect(framed.contentLength).toBe(framed.headerBytes + total);
    expect(counter.opened).toBe(0);
    let read = 0;
    let maxAhead = 0;
    for await (const chunk of framed.body) {
      read += (chunk as Buffer).byteLength;
      maxAhead = Math.max(maxAhead, counter.produced - (read - framed.headerBytes));
      // A slow reader: let the producer run ahead if nothing holds it back.
      if (read % (4 * CHUNK) < CHUNK) await new Promise((r) => setImmediate(r));
    }
    expect(read).toBe(framed.contentLength);
    expect(maxAhead).toBeLessThan(1024 * 1024);
  });

  it('frames outputs in order after the header, opening each tensor when it is reached', async () => {
    const { counter, reader } = countingReader();
    const framed = framedJob(jobWith([fp32('a', 8), fp32('b', 200_000)]), reader);
    const chunks: Buffer[] = [];
    for await (const chunk of framed.body) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    expect(body.byteLength).toBe(framed.contentLength);
    expect(framed.headers).toEqual({
      'content-type': 'application/octet-stream',
      'inference-header-content-length': framed.headerBytes,
      'content-length': framed.contentLength,
    });
    const parsed = parseInferResponseBody(body, framed.headerBytes);
    if (!parsed.ok) throw new Error(JSON.stringify(parsed));
    expect(parsed.value.header.outputs).toEqual([
      { name: 'a', datatype: 'FP32', shape: [2], bytes: 8, parameters: { binary_data_size: 8 } },
      { name: 'b', datatype: 'FP32', shape: [50_000], bytes: 200_000, parameters: { binary_data_size: 200_000 } },
    ]);
    expect(parsed.value.tensors.map((x) => x!.byteLength)).toEqual([8, 200_000]);
    expect([parsed.value.tensors[1]![CHUNK - 1], parsed.value.tensors[1]![CHUNK]]).toEqual([0, 1]);
    expect(counter.opened).toBe(2);
  });

  it('ends the body with an error when a stored tensor is not its recorded size (never a shifted frame)', async () => {
    for (const actual of [100, 300]) {
      const { reader } = countingReader(actual);
      const framed = framedJob(jobWith([fp32('x', 200)]), reader);
      await expect(async () => {
        for await (const _ of framed.body);
      }).rejects.toThrow(/not the size recorded/);
    }
  });

  it('is the header alone for a job without outputs', async () => {
    const { counter, reader } = countingReader();
    const framed = framedJob(jobWith(null), reader);
    const chunks: Buffer[] = [];
    for await (const chunk of framed.body) chunks.push(chunk as Buffer);
    expect(Buffer.concat(chunks).byteLength).toBe(framed.headerBytes);
    expect(framed.contentLength).toBe(framed.headerBytes);
    expect(JSON.parse(Buffer.concat(chunks).toString())).toMatchObject({ status: 'queued', inputs: [] });
    expect(counter.opened).toBe(0);
  });
});

describe('prefersFramedJob', () => {
  const ask = (accept?: string) => prefersFramedJob({ headers: accept === undefined ? {} : { accept } } as never);
  it('weighs q-values, then the order of Accept, and falls back to JSON', () => {
    expect(ask()).toBe(false);
    expect(ask('*/*')).toBe(false);
    expect(ask('application/octet-stream')).toBe(true);
    expect(ask('application/json;q=0.9, application/octet-stream')).toBe(true);
    expect(ask('application/octet-stream;q=0.1, application/json')).toBe(false);
    expect(ask('application/octet-stream;q=0')).toBe(false);
    expect(ask('image/png')).toBe(false);
  });
});
