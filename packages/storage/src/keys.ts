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

export function jobInputKey(jobId: string, index: number): string {
  return `jobs/${jobId}/inputs/${index}.bin`;
}

export function jobOutputKey(jobId: string, index: number): string {
  return `jobs/${jobId}/outputs/${index}.bin`;
}
