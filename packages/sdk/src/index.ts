// The browser-safe entry: fetch only, no node: imports. The CLI (src/cli) is not exported.
export type { BatchesApi } from './batches.ts';
export { createClient, type ClientOptions, type CreatedKey, type InferqClient, type KeysApi } from './client.ts';
export { InferqError, JobWaitTimeoutError, isInferqError, type InferqErrorCode, type ProblemFieldError } from './errors.ts';
export type { FetchLike } from './http.ts';
export { isFinishedJob, type JobSummary, type JobsApi, type JobsQuery, type OutputEncoding, type SubmitOptions, type SubmitResult } from './jobs.ts';
export type { ModelUpload, ModelsApi } from './models.ts';
export { dataTypeOfArray, outputArray, tensor, typedArrayFromBytes, type TensorArray, type TensorOptions, type TypedArrayOf } from './tensors.ts';
export type { WaitOptions } from './wait-for-job.ts';
export type {
  ApiKey,
  Batch,
  CreateKeyBody,
  DataType,
  InputTensor,
  Job,
  JobAccepted,
  JobStatus,
  Model,
  ModelQueue,
  ModelRoute,
  ModelRouting,
  OutputTensor,
  Stats,
  SubmitJobBody,
  Usage,
  UsageQuery,
  WorkerStatus,
} from '@inferq/contracts';
export { isTerminalStatus } from '@inferq/contracts';
