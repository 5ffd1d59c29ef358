import { describe, expect, it } from 'vitest';
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
