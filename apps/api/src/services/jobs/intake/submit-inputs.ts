import type { StoredTensor } from '@inferq/contracts';

// A submit's inputs as the jobs service takes them, whichever body form carried
// them: JSON values or base64 text, raw bytes (a framed body, /v2 binary), bytes
// already streamed into the job's slot (a multipart part), or an upload to claim.

/** A tensor's header as the request gives it; the datatype is checked at intake. */
interface SubmitTensorHead {
  name: string;
  datatype: string;
  shape: number[];
}

/** JSON `data`: row-major values (flat or nested), or base64 text of the little-endian bytes. */
type JsonSubmitTensor = SubmitTensorHead & { data: unknown[] | string };
/** The raw little-endian bytes, as they came (no base64 round trip). */
type BytesSubmitTensor = SubmitTensorHead & { bytes: Uint8Array };
/** Bytes streamed into the job's own slot (`SubmitJobInput.slot`) at this input's index; `sha256` is their digest, taken while streaming. */
type StoredSubmitTensor = SubmitTensorHead & { stored: StoredTensor; sha256: string };
/** The id of an upload (POST /v1/uploads) that holds the bytes: claimed into the job's slot when it is stored. */
type UploadSubmitTensor = SubmitTensorHead & { upload: string };

export type SubmitTensor = JsonSubmitTensor | BytesSubmitTensor | StoredSubmitTensor | UploadSubmitTensor;

/** Where a submit's inputs are stored: the job's id and the time its object keys are filed under, chosen before the insert. */
export interface JobSlot {
  jobId: string;
  createdAt: Date;
}
