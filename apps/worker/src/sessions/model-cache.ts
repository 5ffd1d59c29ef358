import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError } from '@inferq/core';
import type { Storage } from '@inferq/storage';

export interface CachedArtifact {
  sha256: string;
  artifactKey: string;
}

/**
 * Model files fetched from S3 into a local folder named by sha256, verified
 * before first use; a file that fails the check is never loaded.
 */
export function createModelCache(options: { storage: Storage; dir: string }) {
  const verified = new Map<string, Promise<string>>();
  const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

  async function fetchVerified(a: CachedArtifact): Promise<string> {
    const path = join(options.dir, `${a.sha256}.onnx`);
    const local = await readFile(path).catch(() => undefined);
    if (local && sha256Of(local) === a.sha256) return path;
    const bytes = await options.storage.getObject(a.artifactKey);
    if (sha256Of(bytes) !== a.sha256) throw new AppError('MODEL_ARTIFACT_INVALID', `artifact ${a.artifactKey} does not match its sha256 ${a.sha256}`);
    await mkdir(options.dir, { recursive: true });
    // Unique per download: workers in other containers sharing the cache volume can have the same pid.
    const partial = `${path}.${randomUUID()}.partial`;
    await writeFile(partial, bytes);
    await rename(partial, path);
    return path;
  }

  return {
    /** Local path of the verified model file; concurrent callers share one download. */
    ensureModelFile(a: CachedArtifact): Promise<string> {
      let p = verified.get(a.sha256);
      if (!p) {
        p = fetchVerified(a);
        verified.set(a.sha256, p);
        p.catch(() => verified.delete(a.sha256));
      }
      return p;
    },
  };
}
export type ModelCache = ReturnType<typeof createModelCache>;
