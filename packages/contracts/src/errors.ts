/**
 * The error catalogue: every failure inferq reports on purpose has a stable
 * code here. Codes are never renamed once shipped; clients switch on them.
 */
export const ErrorCatalogue = {
  VALIDATION_FAILED: { status: 400, title: 'The request is not valid', retryable: false },
  MALFORMED_BODY: { status: 400, title: 'The request body could not be parsed', retryable: false },
  // HTTP-level errors, answered before any route runs (some straight on the socket).
  MALFORMED_REQUEST: { status: 400, title: 'The request line, URL or headers could not be parsed', retryable: false },
  REQUEST_TIMEOUT: { status: 408, title: 'The request was not received in time', retryable: true },
  HEADERS_TOO_LARGE: { status: 431, title: 'The request headers exceed the size limit', retryable: false },
  TRANSFER_ENCODING_UNSUPPORTED: { status: 501, title: 'The request uses a transfer coding the server does not implement', retryable: false },
  INPUT_MISSING: { status: 400, title: 'A required model input is missing', retryable: false },
  INPUT_UNKNOWN: { status: 400, title: 'An input is not part of the model signature', retryable: false },
  INPUT_DUPLICATE: { status: 400, title: 'An input is given more than once', retryable: false },
  INPUT_DATATYPE_MISMATCH: { status: 400, title: 'An input has the wrong datatype', retryable: false },
  INPUT_SHAPE_MISMATCH: { status: 400, title: 'An input has the wrong shape', retryable: false },
  INPUT_DATA_INVALID: { status: 400, title: 'Input data does not match its datatype and shape', retryable: false },
  INPUT_BATCH_MISMATCH: { status: 400, title: 'Inputs disagree on the batch dimension', retryable: false },
  DATATYPE_UNSUPPORTED: { status: 400, title: 'The datatype is not supported', retryable: false },
  // The binary tensor data extension (Inference-Header-Content-Length and parameters.binary_data_size).
  BINARY_HEADER_LENGTH_INVALID: { status: 400, title: 'Inference-Header-Content-Length is not an integer within the body', retryable: false },
  BINARY_SIZE_INVALID: { status: 400, title: 'A binary_data_size is not a non-negative integer', retryable: false },
  BINARY_SIZE_MISMATCH: { status: 400, title: 'The binary data does not match the sizes, datatypes and shapes the JSON header gives', retryable: false },
  BINARY_DATA_CONFLICT: { status: 400, title: 'A tensor has both JSON data and binary_data_size', retryable: false },
  // A job input naming an upload (POST /v1/uploads) instead of its data.
  UPLOAD_NOT_FOUND: { status: 400, title: "The upload does not exist, is another key's, was used already or has expired", retryable: false },
  UPLOAD_MISMATCH: { status: 400, title: "The upload's datatype or shape is not the input's", retryable: false },
  UPLOAD_INCOMPLETE: { status: 400, title: 'The upload has not been put, or not with the bytes it was created for', retryable: false },
  INPUT_TOO_LONG: { status: 400, title: 'A text has more tokens than the model takes', retryable: false },
  MODEL_NOT_EMBEDDING: { status: 400, title: 'The model is not registered for embeddings (it has no tokenizer)', retryable: false },
  WEBHOOK_URL_REFUSED: { status: 400, title: 'The webhook URL is not allowed', retryable: false },
  JOB_FILTER_EMPTY: { status: 400, title: 'A bulk action needs a filter with at least one field', retryable: false },
  INPUT_TOO_LARGE: { status: 413, title: 'The inputs exceed the size limit', retryable: false },
  PAYLOAD_TOO_LARGE: { status: 413, title: 'The request body exceeds the size limit', retryable: false },
  UNSUPPORTED_MEDIA_TYPE: { status: 415, title: 'The content type is not supported', retryable: false },
  UNAUTHENTICATED: { status: 401, title: 'A valid API key is required', retryable: false },
  FORBIDDEN: { status: 403, title: 'The API key lacks the scope for this action', retryable: false },
  NOT_FOUND: { status: 404, title: 'Resource not found', retryable: false },
  JOB_NOT_FOUND: { status: 404, title: 'Job not found', retryable: false },
  // The Batch API (POST /v1/files, /v1/batches).
  FILE_NOT_FOUND: { status: 404, title: "The file does not exist or is another key's", retryable: false },
  FILE_IN_USE: { status: 409, title: 'A batch that has not ended reads this file', retryable: false },
  FILE_INVALID: { status: 400, title: 'The file is not one a batch can take', retryable: false },
  BATCH_NOT_FOUND: { status: 404, title: "The batch does not exist or is another key's", retryable: false },
  BATCH_NOT_CANCELABLE: { status: 409, title: 'The batch has ended', retryable: false },
  MODEL_NOT_FOUND: { status: 404, title: 'Model not found', retryable: false },
  OUTPUT_NOT_FOUND: { status: 404, title: 'Output not found', retryable: false },
  JOB_RUNNING: { status: 409, title: 'The job is running; delete it once it has finished', retryable: true },
  JOB_NOT_CANCELABLE: { status: 409, title: 'Only a queued job can be canceled', retryable: false },
  IDEMPOTENCY_CONFLICT: { status: 409, title: 'The idempotency key was used with a different request', retryable: false },
  MODEL_VERSION_ROUTED: { status: 409, title: "The model's routing table sends traffic to the version", retryable: false },
  MODEL_VERSION_RETIRED: { status: 410, title: 'The model version is retired: it takes no new jobs', retryable: false },
  // The job's data is gone for good: a tombstone (purgedAt, purgeReason, job) or inputs dropped (inputsDroppedAt).
  JOB_PURGED: { status: 410, title: 'The job was purged: only its tombstone is kept', retryable: false },
  JOB_INPUTS_DROPPED: { status: 410, title: "The job's input tensors were dropped after the input retention", retryable: false },
  // Accepted, then its row (and any result) lost with the database's last commits (a failover to an asynchronous standby); `lostAt`.
  JOB_LOST: { status: 410, title: "The job was lost with the database's last commits", retryable: false },
  MODEL_INVALID: { status: 422, title: 'The file is not a valid ONNX model', retryable: false },
  MODEL_UNSUPPORTED: { status: 422, title: 'The model uses features inferq does not serve', retryable: false },
  RATE_LIMITED: { status: 429, title: 'Too many requests', retryable: true },
  QUEUE_FULL: { status: 429, title: 'The model backlog is full', retryable: true },
  INTERNAL: { status: 500, title: 'Internal error', retryable: true },
  QUEUE_UNAVAILABLE: { status: 503, title: 'The queue is unavailable', retryable: true },
  DATABASE_UNAVAILABLE: { status: 503, title: 'The database is unavailable', retryable: true },
  STORAGE_UNAVAILABLE: { status: 503, title: 'Object storage is unavailable', retryable: true },
  MODEL_UNAVAILABLE: { status: 503, title: 'No worker serves this model', retryable: true },
  // The job stays queued or running: the reply names it so the caller can poll it.
  INFERENCE_TIMEOUT: { status: 504, title: 'The inference did not finish in time', retryable: true },
  // Stored on failed jobs by workers; never an HTTP reply.
  MODEL_LOAD_FAILED: { status: 500, title: 'The model could not be loaded', retryable: false },
  MODEL_ARTIFACT_INVALID: { status: 500, title: 'The model artifact failed its checksum', retryable: false },
  DEADLINE_EXCEEDED: { status: 500, title: 'The job was still queued at its deadline', retryable: false },
  INFERENCE_FAILED: { status: 500, title: 'The model failed while running', retryable: true },
  OUTPUT_WRITE_FAILED: { status: 500, title: 'The results could not be stored', retryable: true },
  // The last error of a job a worker gave back for a fault of its own (download, credentials, disk, a model that would not load there); it is queued again.
  WORKER_FAULT: { status: 503, title: 'A worker could not run the job and gave it back to the queue', retryable: true },
} as const satisfies Record<string, { status: number; title: string; retryable: boolean }>;

export type ErrorCode = keyof typeof ErrorCatalogue;

export const isErrorCode = (value: unknown): value is ErrorCode => typeof value === 'string' && Object.hasOwn(ErrorCatalogue, value);
