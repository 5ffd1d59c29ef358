// The browser-safe entry: fetch only, no node: imports. The CLI (src/cli) is not exported.
export {
  BATCH_END_STATUSES,
  batchProgress,
  isBatchEnded,
  type BatchProgress,
  type BatchCreateOptions,
  type BatchesApi,
  type BatchesQuery,
  type BatchWaitOptions,
  type BulkBatchStatus,
  type CreateBatchRequest,
} from './batches.ts';
export { createClient, type ClientOptions, type CreatedKey, type InferqClient, type KeysApi } from './client.ts';
export { InferqError, JobWaitTimeoutError, isInferqError, type InferqErrorCode, type ProblemFieldError } from './errors.ts';
export type { BatchOutputLine, FileDeleted, FilesApi, FilesQuery, FileSource, FileUploadOptions } from './files.ts';
export type { FetchLike } from './http.ts';
export type { InferenceBatchesApi } from './inference-batches.ts';
export { decodeJsonJob, type DecodedJob, type DecodedOutput } from './job-response.ts';
export { NpyFormatError, readNpy, writeNpy, type NpyTensor } from './npy.ts';
export { DEFAULT_THRESHOLDS, type ArrayInput, type SubmitInput, type SubmitRequest, type TransferThresholds, type UploadInput } from './submit-body.ts';
export { DEFAULT_SUBMIT_RETRY, type SubmitRetryOptions } from './submit-retry.ts';
export type { UploadTicket, UploadsApi } from './uploads.ts';
export {
  isFinishedJob,
  type BulkActionOptions,
  type GetOptions,
  type JobSummary,
  type JobsApi,
  type JobsQuery,
  type OutputEncoding,
  type RetryCallOptions,
  type SubmitOptions,
  type SubmitResult,
} from './jobs.ts';
export type { ModelUpload, ModelsApi } from './models.ts';
export { formatRetention, parseRetention } from './retention.ts';
export { bytesOfArray, dataTypeOfArray, outputArray, tensor, typedArrayFromBytes, type TensorArray, type TensorOptions, type TypedArrayOf } from './tensors.ts';
export type { WaitOptions } from './wait-for-job.ts';
export type {
  ApiKey,
  Batch,
  BatchEndpoint,
  BulkBatch,
  BulkBatchList,
  BulkJobActionResult,
  CreateKeyBody,
  CreateBulkBatchBody,
  DataType,
  FileList,
  FileObject,
  InputTensor,
  Job,
  JobAccepted,
  JobFilterQuery,
  JobStatus,
  ListBulkBatchesQuery,
  ListFilesQuery,
  ListJobsQuery,
  Model,
  ModelQueue,
  ModelRetention,
  ModelRetirement,
  ModelRoute,
  ModelRouting,
  ModelSettings,
  OutputTensor,
  Stats,
  SubmitJobBody,
  Usage,
  UsageQuery,
  WorkerStatus,
} from '@inferq/contracts';
export { isTerminalStatus } from '@inferq/contracts';
