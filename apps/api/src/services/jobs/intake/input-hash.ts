import { createHash, type Hash } from 'node:crypto';

/** A tensor as the hashes see it: its header and the sha256 (hex) of its bytes. */
export interface DigestedTensor {
  name: string;
  datatype: string;
  shape: readonly number[];
  sha256: string;
}

/** The sha256 (hex) of a tensor's bytes: the same whichever body form (JSON, base64, framed, multipart) carried them. */
export const tensorDigest = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/** The sha256 (hex) of a stream's bytes, read through without keeping them (a stored tensor's, an upload's). */
export async function streamDigest(body: NodeJS.ReadableStream): Promise<string> {
  const hash: Hash = createHash('sha256');
  for await (const chunk of body as AsyncIterable<Buffer | string>) hash.update(chunk);
  return hash.digest('hex');
}

/**
 * The response cache's key for a job's inputs: sha256 over every tensor's
 * name, datatype, shape and byte digest, in name order so the order the
 * request listed them in does not matter. Each entry is length-framed JSON, so
 * no two different tensor sets hash the same text.
 */
export function hashInputs(tensors: readonly DigestedTensor[]): string {
  const hash = createHash('sha256');
  for (const t of [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const entry = JSON.stringify([t.name, t.datatype, t.shape, t.sha256]);
    hash.update(`${entry.length}:${entry}`);
  }
  return hash.digest('hex');
}

/**
 * What an Idempotency-Key is bound to: the request's fields and its inputs'
 * digests (so a tensor hashes the same whichever body form carried it; an
 * upload by its id). `extra` is hashed only when it has a value, so the
 * hashes of requests made before a field existed stay the same.
 */
export function hashRequest(fields: readonly unknown[], inputs: readonly DigestedTensor[], extra: Record<string, unknown> = {}): string {
  const set = Object.fromEntries(Object.entries(extra).filter(([, v]) => v !== undefined && v !== false));
  const request = [...fields, inputs.map((t) => [t.name, t.datatype, t.shape, t.sha256])];
  return createHash('sha256')
    .update(JSON.stringify(Object.keys(set).length > 0 ? [...request, set] : request))
    .digest('hex');
}
