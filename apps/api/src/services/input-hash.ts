import { createHash } from 'node:crypto';
import type { RawTensor } from '@inferq/contracts';

/**
 * The response cache's key for a job's inputs: sha256 over every tensor's
 * name, datatype, shape and bytes, in name order so the order the request
 * listed them in does not matter. Each header is length-framed JSON, so no
 * two different tensor sets hash the same bytes.
 */
export function hashInputs(tensors: readonly RawTensor[]): string {
  const hash = createHash('sha256');
  for (const t of [...tensors].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const header = JSON.stringify([t.name, t.datatype, t.shape, t.data.byteLength]);
    hash.update(`${header.length}:${header}`).update(t.data);
  }
  return hash.digest('hex');
}
