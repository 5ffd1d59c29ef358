import { createStorage, type Storage } from '@inferq/storage';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startS3Server, type RunningS3Server } from './s3-server.ts';

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

describe('startS3Server with the storage package', () => {
  let dir: string;
  let s3: RunningS3Server;
  let storage: Storage;
  const big = randomBytes(6 * 1024 * 1024);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-s3-'));
    const t0 = performance.now();
    s3 = await startS3Server({ dir });
    console.log(`embedded S3 started in ${Math.round(performance.now() - t0)} ms`);
    storage = createStorage({ ...s3, bucket: 'inferq-test', forcePathStyle: true });
  });

  afterAll(async () => {
    storage?.close();
    await s3?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates the bucket, and a second ensureBucket is a no-op', async () => {
    await storage.ensureBucket();
    await storage.ensureBucket();
  });

  it('puts, heads and gets a 6 MB object byte for byte', async () => {
    await storage.putObject('models/big/1/abc.onnx', big, { contentType: 'application/octet-stream' });
    expect(await storage.headObject('models/big/1/abc.onnx')).toEqual({ sizeBytes: big.byteLength });
    expect(Buffer.from(await storage.getObject('models/big/1/abc.onnx')).equals(big)).toBe(true);
    expect((await readAll(await storage.getObjectStream('models/big/1/abc.onnx'))).equals(big)).toBe(true);
  });

  it('stores a streamed body unchanged (no aws-chunked framing)', async () => {
    const body = randomBytes(300_000);
    await storage.putObject('jobs/j1/inputs/0.bin', Readable.from([body.subarray(0, 100_000), body.subarray(100_000)]), { contentLength: body.byteLength });
    expect(Buffer.from(await storage.getObject('jobs/j1/inputs/0.bin')).equals(body)).toBe(true);
  });

  it('refuses a stream without a length instead of failing inside S3', async () => {
    await expect(storage.putObject('jobs/j1/inputs/1.bin', Readable.from([Buffer.from('x')]))).rejects.toThrow(/contentLength is required/);
  });

  it('serves a presigned GET to a plain fetch', async () => {
    const url = await storage.presignGet('models/big/1/abc.onnx', 60);
    expect(url).toMatch(/X-Amz-Signature=/);
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(Buffer.from(await res.arrayBuffer()).equals(big)).toBe(true);
  });

  it('deletes objects; head then reports them missing', async () => {
    await storage.deleteObjects(['models/big/1/abc.onnx', 'jobs/j1/inputs/0.bin']);
    await storage.deleteObjects([]);
    expect(await storage.headObject('models/big/1/abc.onnx')).toBeUndefined();
    expect(await storage.headObject('jobs/j1/inputs/0.bin')).toBeUndefined();
    await expect(storage.getObject('models/big/1/abc.onnx')).rejects.toMatchObject({ name: 'NoSuchKey' });
  });
});
