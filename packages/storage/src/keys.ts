// The object key layout, in one place so the API (writer) and the worker
// (reader) can never disagree about where an object lives.

/** The sha256 in the key makes a re-upload of different bytes a new object, so caches keyed by it never go stale. */
export function modelArtifactKey(name: string, sha256: string): string {
  return `models/${name}/${sha256}.onnx`;
}

/** An embedding model's tokenizer.json, content-addressed like the artifact. */
export function modelTokenizerKey(name: string, sha256: string): string {
  return `models/${name}/${sha256}.tokenizer.json`;
}

/** Every job's objects live under this prefix (the bucket's expiry rule covers it; model artifacts are elsewhere). */
export const JOB_OBJECTS_PREFIX = 'jobs/';
/** The ID of the bucket lifecycle rule that expires job objects (the operator's own rules keep theirs). */
export const JOB_OBJECTS_EXPIRY_RULE = 'inferq-job-objects';

/**
 * A job's objects are filed under the UTC day it was submitted
 * (`jobs/2026-11-25/<id>/…`), so a whole day can be listed and deleted at
 * once when it has aged out.
 */
export const jobObjectsDayPrefix = (createdAt: Date): string => `${JOB_OBJECTS_PREFIX}${createdAt.toISOString().slice(0, 10)}/`;

export function jobInputKey(jobId: string, createdAt: Date, index: number): string {
  return `${jobObjectsDayPrefix(createdAt)}${jobId}/inputs/${index}.bin`;
}

/**
 * A segment's object (input-segments.ts): the small inputs of one group of submits, back to back, filed under the
 * day of its group's first job (its name's first id, a UUIDv7, carries the time): `jobs/<day>/segments/<name>.bin`.
 */
export function inputSegmentKey(name: string): string {
  return `${jobObjectsDayPrefix(new Date(parseInt(name.slice(0, 12), 16)))}segments/${name}.bin`;
}

/** The name of the segment whose object this is; undefined for any other key. */
export function inputSegmentOfKey(key: string): string | undefined {
  const name = /^jobs\/\d{4}-\d{2}-\d{2}\/segments\/([0-9a-f]{32}\.[0-9a-f]{32})\.bin$/.exec(key)?.[1];
  return name !== undefined && inputSegmentKey(name) === key ? name : undefined;
}

/** Under the batch that computed it: a stale attempt writing late never overwrites the objects of the attempt whose result stands. */
export function jobOutputKey(jobId: string, createdAt: Date, batchId: string, index: number): string {
  return `${jobObjectsDayPrefix(createdAt)}${jobId}/outputs/${batchId}/${index}.bin`;
}

/** Clients' uploads (POST /v1/uploads) live under this prefix until a job takes them; the bucket's expiry rule for it is the backstop. */
export const UPLOAD_OBJECTS_PREFIX = 'uploads/';
/** The ID of the bucket lifecycle rule that expires upload objects. */
export const UPLOAD_OBJECTS_EXPIRY_RULE = 'inferq-upload-objects';

/** An upload's object, filed under the UTC day it was created: `uploads/2026-11-25/<uploadId>.bin`. */
export function uploadObjectKey(uploadId: string, createdAt: Date): string {
  return `${UPLOAD_OBJECTS_PREFIX}${createdAt.toISOString().slice(0, 10)}/${uploadId}.bin`;
}

/** Batch API files (POST /v1/files, and the output and error files a batch writes) live under this prefix until deleted or expired (the API's file sweep). */
export const FILE_OBJECTS_PREFIX = 'files/';

/** A file's object: `files/<fileId>.jsonl`. */
export function fileObjectKey(fileId: string): string {
  return `${FILE_OBJECTS_PREFIX}${fileId}.jsonl`;
}
