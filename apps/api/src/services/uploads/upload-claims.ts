import type { StoredTensor } from '@inferq/contracts';
import type { TensorHead, TensorSlot } from '@inferq/storage';
import type { Principal } from '../keys/api-keys-service.ts';

/**
 * Moves an upload (POST /v1/uploads) into a job's inputs: the jobs service's
 * view of the uploads service. `claim` checks that the upload is the
 * principal's, exists, holds exactly `bytes` bytes and was declared with the
 * head's datatype and shape, then files it at `index` of `slot` (an upload is
 * used once, by a job that is recorded: see `settle`) and answers the tensor
 * as the job's row keeps it. It rejects with
 * the catalogue's error (4xx) when any of that fails.
 */
export interface UploadClaims {
  claim(principal: Principal, uploadId: string, slot: TensorSlot, index: number, head: TensorHead, bytes: number): Promise<StoredTensor>;
  /**
   * Ends the claims made for `jobId`: once the job is recorded (`recorded`), the uploads' objects are deleted; when
   * the submit failed after the claim (a full backlog, the queue unreachable), the uploads are given back, usable by
   * the client's retry until they expire. Never rejects.
   */
  settle(jobId: string, recorded: boolean): Promise<void>;
}
