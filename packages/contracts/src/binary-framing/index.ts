// The Open Inference Protocol's binary tensor data extension: a JSON header,
// then the tensors' bytes back to back, split by Inference-Header-Content-Length
// and each tensor's parameters.binary_data_size. Browser-safe (no Buffer).
export * from './framing-result.ts';
export * from './bytes-elements.ts';
export * from './split-body.ts';
export * from './tensor-slices.ts';
export * from './parse-body.ts';
export * from './output-choice.ts';
export * from './build-body.ts';
