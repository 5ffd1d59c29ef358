import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { optionalTestVar, requiredTestVar } from '@inferq/test-utils';
import { createStorage, isNotFound, isStorageUnavailable } from './s3-client.ts';

describe('isStorageUnavailable', () => {
  it('is true for a request that cannot reach the server', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const storage = createStorage({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      bucket: 'b',
      accessKeyId: 'k',
      secretAccessKey: 's',
      forcePathStyle: true,
    });
    const err = await storage.getObject('k').catch((e: unknown) => e);
    storage.close();
    expect(isStorageUnavailable(err)).toBe(true);
    expect(isNotFound(err)).toBe(false);
  });

  it('is true for a server error and false for a missing object', () => {
    expect(isStorageUnavailable({ name: 'ServiceUnavailable', $metadata: { httpStatusCode: 503 } })).toBe(true);
    expect(isStorageUnavailable({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } })).toBe(false);
  });

  it('ignores errors from other clients with the same system code', () => {
    expect(isStorageUnavailable(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(false);
  });
});

describe('presignGet', () => {
  it('signs links for the public endpoint when one is set, for the endpoint otherwise', async () => {
    const options = { endpoint: 'http://minio:9000', region: 'us-east-1', bucket: 'b', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true };
    const inside = createStorage(options);
    const outside = createStorage({ ...options, publicEndpoint: 'http://localhost:9000' });
    const [internal, external] = await Promise.all([inside.presignGet('outputs/x', 60), outside.presignGet('outputs/x', 60)]);
    inside.close();
    outside.close();
    expect(new URL(internal).host).toBe('minio:9000');
    expect(new URL(external).host).toBe('localhost:9000');
    expect(new URL(external).pathname).toBe('/b/outputs/x');
    expect(new URL(external).searchParams.get('X-Amz-Signature')).not.toBe(new URL(internal).searchParams.get('X-Amz-Signature'));
  });
});

describe('presignPut and copyObject', () => {
  const testStorage = () =>
    createStorage({
      endpoint: requiredTestVar('S3_ENDPOINT'),
      region: optionalTestVar('S3_REGION', 'us-east-1'),
      bucket: `presign${randomBytes(4).toString('hex')}`,
      accessKeyId: optionalTestVar('S3_ACCESS_KEY_ID', ''),
      secretAccessKey: optionalTestVar('S3_SECRET_ACCESS_KEY', ''),
      forcePathStyle: true,
    });

  it('signs the content length (and type), and the signed URL takes a PUT of those bytes without credentials', async () => {
    const storage = testStorage();
    await storage.ensureBucket();
    const body = new Uint8Array(randomBytes(1000));
    const put = await storage.presignPut('uploads/a.bin', { expiresInS: 60, contentLength: body.byteLength, contentType: 'application/octet-stream' });
    expect(put.headers).toEqual({ 'content-length': '1000', 'content-type': 'application/octet-stream' });
    expect(new URL(put.url).searchParams.get('X-Amz-SignedHeaders')?.split(';')).toEqual(expect.arrayContaining(['content-length', 'content-type']));
    // S3 and MinIO refuse a body of another length (the signature fails); the embedded test server does not check, so
    // whoever takes an upload checks its size again (the uploads service: HEAD before the copy).
    const res = await fetch(put.url, { method: 'PUT', headers: put.headers, body });
    expect(res.status).toBe(200);
    expect(await storage.headObject('uploads/a.bin')).toEqual({ sizeBytes: 1000 });

    await storage.copyObject('uploads/a.bin', 'jobs/b.bin');
    expect(await storage.getObject('jobs/b.bin')).toEqual(body);
    const missing = await storage.copyObject('uploads/none.bin', 'jobs/c.bin').catch((e: unknown) => e);
    expect(isNotFound(missing)).toBe(true);
    storage.close();
  });

  it('signs PUT links for the public endpoint when one is set', async () => {
    const options = { endpoint: 'http://minio:9000', region: 'us-east-1', bucket: 'b', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true };
    const outside = createStorage({ ...options, publicEndpoint: 'http://localhost:9000' });
    const { url } = await outside.presignPut('uploads/x.bin', { expiresInS: 60, contentLength: 4 });
    outside.close();
    expect(new URL(url).host).toBe('localhost:9000');
    expect(new URL(url).pathname).toBe('/b/uploads/x.bin');
  });
});
