import { describe, expect, it } from 'vitest';
import { createStorage, isNotFound, isStorageUnavailable } from './s3-client.ts';

describe('isStorageUnavailable', () => {
  it('is true for a request that cannot reach the server', async () => {
    // Port 1 on loopback: nothing listens, the connection is refused at once.
    const storage = createStorage({ endpoint: 'http://127.0.0.1:1', region: 'us-east-1', bucket: 'b', accessKeyId: 'k', secretAccessKey: 's', forcePathStyle: true });
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
