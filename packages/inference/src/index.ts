// Only main-thread modules are exported: nothing here loads onnxruntime,
// which is loaded only inside session threads (session-thread.ts).
export { Batcher, type BatcherOptions, type BatchItem } from './batcher.ts';
export { BatchesInFlight, type BatchStages } from './batches-in-flight.ts';
export { systemClock, type Clock } from './clock.ts';
export { InferenceProfile, type ProfilePoint } from './inference-profile.ts';
export { chooseBatching, type AdaptiveBounds, type BatchingChoice } from './choose-batching.ts';
export { concatBatch, splitBatch } from './batch-tensors.ts';
export { parseDevice, providerCandidates, providerName, type Device, type DeviceKind, type ProviderCandidate } from './providers.ts';
export { openModelSession, type ModelSession, type OpenModelSessionOptions } from './model-session.ts';
export { ModelLoadError } from './model-load-error.ts';
export type { BatchRunResult, JobResult, FailedProvider, GraphOptimizationLevel, PlacementRun } from './thread-protocol.ts';
// For other threads of the worker (its feeder threads): starting one on a .ts or bundled entry, and moving tensor bytes to it.
export { listBuffers, ownBatchBuffers, postWithTransfer } from './thread-protocol.ts';
export { spawnThread } from './spawn-thread.ts';
export { PROVIDER_RECORD_FILE, type ProviderPairingPolicy } from './provider-pairing.ts';
