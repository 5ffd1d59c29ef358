import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_TIME } from './examples.ts';
import { FiniteInteger, StorableText, storableTextPattern } from './request-values.ts';

// The Batch API in OpenAI's shapes (POST /v1/files, /v1/batches): a JSONL file
// of requests, a batch that runs each line as a job, an output and an error
// file keyed by custom_id. Times are Unix seconds, as OpenAI's are.

export const FILE_PURPOSES = ['batch', 'batch_output'] as const;
/** What a batch's lines may call: inferq's own job body, or OpenAI's embeddings. */
export const BATCH_ENDPOINTS = ['/v1/jobs', '/v1/embeddings'] as const;
export type BatchEndpoint = (typeof BATCH_ENDPOINTS)[number];
export const BATCH_STATUSES = ['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled'] as const;

const EXAMPLE_FILE_ID = 'file-0190a1b29d8e7f6a8b5c4d3e2f1a0b9c';
const EXAMPLE_BATCH_ID = 'batch_0190a1b2a4417c3e9b1d5e6f7a8b9c0d';
const EXAMPLE_S = Math.floor(Date.parse(EXAMPLE_TIME) / 1000);
const EXAMPLE_FILE = {
  id: EXAMPLE_FILE_ID,
  object: 'file',
  bytes: 45_123_456,
  created_at: EXAMPLE_S,
  filename: 'requests.jsonl',
  purpose: 'batch',
  status: 'processed',
  expires_at: null,
};
const EXAMPLE_BATCH = {
  id: EXAMPLE_BATCH_ID,
  object: 'batch',
  endpoint: '/v1/jobs',
  errors: null,
  input_file_id: EXAMPLE_FILE_ID,
  completion_window: '24h',
  status: 'in_progress',
  output_file_id: null,
  error_file_id: null,
  created_at: EXAMPLE_S,
  in_progress_at: EXAMPLE_S + 4,
  expires_at: EXAMPLE_S + 86_400,
  finalizing_at: null,
  completed_at: null,
  failed_at: null,
  expired_at: null,
  cancelling_at: null,
  cancelled_at: null,
  request_counts: { total: 100_000, completed: 41_230, failed: 12 },
  metadata: { run: 'nightly' },
};
const listExample = (item: { id: string }) => ({ object: 'list', data: [item], first_id: item.id, last_id: item.id, has_more: false });

const FileId = Type.String({ pattern: '^file-[0-9a-f]{32}(-output|-errors)?$', description: 'A file id: `file-…`' });
const BatchId = Type.String({ pattern: '^batch_[0-9a-f]{32}$', description: 'A batch id: `batch_…`' });
const UnixTime = Type.Integer({ description: 'Unix seconds' });
const NullableTime = Type.Union([UnixTime, Type.Null()]);

/** OpenAI's bounds on a file's `expires_after.seconds`: an hour to 30 days. */
export const FILE_EXPIRY_MIN_S = 3_600;
export const FILE_EXPIRY_MAX_S = 2_592_000;
export const ExpiresAfterSchema = Type.Object(
  {
    anchor: Type.Literal('created_at', { description: "The only anchor: the file's creation" }),
    seconds: Type.Integer({ minimum: FILE_EXPIRY_MIN_S, maximum: FILE_EXPIRY_MAX_S, description: 'Seconds after the anchor the file is deleted' }),
  },
  { additionalProperties: false },
);

export const FileObjectSchema = Type.Object(
  {
    id: FileId,
    object: Type.Literal('file'),
    bytes: Type.Integer(),
    created_at: UnixTime,
    filename: Type.String(),
    purpose: StringEnum(FILE_PURPOSES),
    status: Type.Literal('processed', { description: "Always `processed` (OpenAI's field, deprecated there)" }),
    expires_at: Type.Union([UnixTime, Type.Null()], {
      description:
        "When the file is deleted: an upload's `expires_after` (else the server's default, 30 days), an output or error " +
        "file's by its batch's `output_expires_after`; null: kept until deleted",
    }),
  },
  { $id: 'FileObject', examples: [EXAMPLE_FILE] },
);
export type FileObject = Static<typeof FileObjectSchema>;

export const FileParamsSchema = Type.Object({ id: FileId });
export const FileDeletedSchema = Type.Object(
  { id: FileId, object: Type.Literal('file'), deleted: Type.Literal(true) },
  { examples: [{ id: EXAMPLE_FILE_ID, object: 'file', deleted: true }] },
);

/** Cursor pagination as OpenAI's lists: `after` the last id seen, newest first. */
const listQuery = (id: typeof FileId | typeof BatchId) =>
  Type.Object(
    {
      after: Type.Optional(id),
      limit: Type.Optional(FiniteInteger({ minimum: 1, maximum: 100, default: 20 })),
    },
    { additionalProperties: false },
  );
const listOf = <T extends typeof FileObjectSchema | typeof BulkBatchSchema>(item: T, example: { id: string }) =>
  Type.Object(
    {
      object: Type.Literal('list'),
      data: Type.Array(item),
      first_id: Type.Union([Type.String(), Type.Null()]),
      last_id: Type.Union([Type.String(), Type.Null()]),
      has_more: Type.Boolean({ description: 'More follow: ask again with `after` = `last_id`' }),
    },
    { examples: [listExample(example)] },
  );

export const ListFilesQuerySchema = Type.Intersect([listQuery(FileId), Type.Object({ purpose: Type.Optional(StringEnum(FILE_PURPOSES)) })]);
export type ListFilesQuery = Static<typeof ListFilesQuerySchema>;

export const BulkBatchErrorSchema = Type.Object({
  code: Type.String(),
  message: Type.String(),
  param: Type.Union([Type.String(), Type.Null()]),
  line: Type.Union([Type.Integer({ description: "The input file's line, from 1" }), Type.Null()]),
});

export const BulkBatchSchema = Type.Object(
  {
    id: BatchId,
    object: Type.Literal('batch'),
    endpoint: StringEnum(BATCH_ENDPOINTS),
    errors: Type.Union([Type.Object({ object: Type.Literal('list'), data: Type.Array(BulkBatchErrorSchema) }), Type.Null()], {
      description: 'Why the input file was refused (status `failed`)',
    }),
    input_file_id: Type.String(),
    completion_window: Type.String(),
    status: StringEnum(BATCH_STATUSES),
    output_file_id: Type.Union([Type.String(), Type.Null()], { description: 'The succeeded lines, one answer each, once the batch has ended' }),
    error_file_id: Type.Union([Type.String(), Type.Null()], {
      description: 'The lines that did not succeed, once the batch has ended; null when there are none',
    }),
    created_at: UnixTime,
    in_progress_at: NullableTime,
    expires_at: UnixTime,
    finalizing_at: NullableTime,
    completed_at: NullableTime,
    failed_at: NullableTime,
    expired_at: NullableTime,
    cancelling_at: NullableTime,
    cancelled_at: NullableTime,
    request_counts: Type.Object({
      total: Type.Integer({ description: "The input file's lines" }),
      completed: Type.Integer({ description: 'Lines answered in the output file so far' }),
      failed: Type.Integer({ description: 'Lines that failed so far (refused, failed, canceled or expired)' }),
    }),
    metadata: Type.Union([Type.Record(Type.String(), Type.String()), Type.Null()]),
  },
  { $id: 'BulkBatch', examples: [EXAMPLE_BATCH] },
);
export type BulkBatch = Static<typeof BulkBatchSchema>;
/** The documented example batch (in progress): tests build theirs from it rather than spell every field again. */
export const exampleBulkBatch: BulkBatch = EXAMPLE_BATCH as BulkBatch;

export const BulkBatchParamsSchema = Type.Object({ id: BatchId });

export const CreateBulkBatchBodySchema = Type.Object(
  {
    // Storable text, not the id pattern: an id that is no file's is 404 FILE_NOT_FOUND, as OpenAI answers it.
    input_file_id: StorableText({ maxLength: 64, description: 'A file uploaded with `purpose=batch`' }),
    endpoint: StringEnum(BATCH_ENDPOINTS, { description: "What every line's `url` must be" }),
    completion_window: Type.String({
      pattern: '^([1-9]|[1-9][0-9]|1[0-5][0-9]|16[0-8])h$',
      description: "How long the batch may run: `24h` (OpenAI's only value) or any whole number of hours up to `168h`",
    }),
    output_expires_after: Type.Optional(
      Type.Union([ExpiresAfterSchema, Type.Null()], {
        description: 'When the output and error files are deleted, from their creation; absent: kept until deleted',
      }),
    ),
    // As a job's metadata: every key and value checked (no NUL, no lone surrogate: jsonb holds neither).
    metadata: Type.Optional(
      Type.Union([
        Type.Record(Type.String({ pattern: storableTextPattern(64) }), StorableText({ maxLength: 512 }), { maxProperties: 16, additionalProperties: false }),
        Type.Null(),
      ]),
    ),
  },
  { examples: [{ input_file_id: EXAMPLE_FILE_ID, endpoint: '/v1/jobs', completion_window: '24h', metadata: { run: 'nightly' } }] },
);
export type CreateBulkBatchBody = Static<typeof CreateBulkBatchBodySchema>;

export const ListBulkBatchesQuerySchema = listQuery(BatchId);
export type ListBulkBatchesQuery = Static<typeof ListBulkBatchesQuerySchema>;

export const FileListSchema = listOf(FileObjectSchema, EXAMPLE_FILE);
export type FileList = Static<typeof FileListSchema>;
export const BulkBatchListSchema = listOf(BulkBatchSchema, EXAMPLE_BATCH);
export type BulkBatchList = Static<typeof BulkBatchListSchema>;
