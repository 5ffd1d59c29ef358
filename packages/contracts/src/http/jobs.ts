import { Type, type Static } from '@sinclair/typebox';
import { JOB_STATUSES, PRIORITIES, PURGE_REASONS } from '../job-status.ts';
import { OutputTensorSchema, SubmitInputTensorSchema } from '../tensors.ts';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_JOB_ID, EXAMPLE_TIME } from './examples.ts';
import { DateTimeInput, FiniteInteger, StorableText, storableTextPattern } from './request-values.ts';

const Uuid = Type.String({ format: 'uuid' });
const StatusSchema = StringEnum(JOB_STATUSES);
const PrioritySchema = StringEnum(PRIORITIES);

export const SubmitJobBodySchema = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 200, description: 'Model name, or name:version', examples: ['mlp'] }),
    inputs: Type.Array(SubmitInputTensorSchema, { minItems: 1, maxItems: 64 }),
    priority: Type.Optional(
      StringEnum(PRIORITIES, {
        default: 'normal',
        description: 'Queue class; high runs before normal before low before batch (bulk work: it does not age up)',
      }),
    ),
    // A key pattern that matches every key (no `.`, which skips newlines) and additionalProperties: false, so every value is checked.
    metadata: Type.Optional(
      Type.Record(Type.String({ pattern: storableTextPattern(64) }), StorableText({ maxLength: 1024 }), { maxProperties: 32, additionalProperties: false }),
    ),
    deadline: Type.Optional(DateTimeInput({ description: 'Run the job before this time or not at all: still queued past it, it ends `expired`' })),
    webhook: Type.Optional(
      Type.Object(
        { url: Type.String({ format: 'uri', minLength: 8, maxLength: 2048, description: 'http(s) URL the finished job is posted to, signed' }) },
        { additionalProperties: false },
      ),
    ),
    keepInputs: Type.Optional(
      Type.Boolean({
        default: false,
        description:
          "Keep the input tensors as long as the job itself; otherwise they are dropped once it has finished (after the server's " +
          'JOB_INPUT_RETENTION_S, 0 by default) and their downloads answer 410 `JOB_INPUTS_DROPPED`',
      }),
    ),
  },
  {
    additionalProperties: false,
    // "hello world" for the demo transformer encoder ([CLS] hello world [SEP] in its tokenizer): valid as written.
    examples: [
      {
        model: 'transformer',
        inputs: [
          { name: 'input_ids', datatype: 'INT64', shape: [1, 4], data: [2, 516, 209, 3] },
          { name: 'attention_mask', datatype: 'INT64', shape: [1, 4], data: [1, 1, 1, 1] },
        ],
        priority: 'high',
        metadata: { team: 'search' },
        webhook: { url: 'https://hooks.example.com/inferq' },
      },
    ],
  },
);
export type SubmitJobBody = Static<typeof SubmitJobBodySchema>;

export const RoutingKeyHeaderSchema = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'Sticky routing: a model named without a version that has a routing table sends every job with the same key to the same version ' +
    'while the table is unchanged. Ignored for `name:version`.',
});

const IdempotencyKeySchema = Type.String({ minLength: 1, maxLength: 200 });

/** The headers of a call that creates jobs from others (a retry, a bulk retry): the same key twice creates them once. */
export const RetryHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(IdempotencyKeySchema),
});

export const SubmitJobHeadersSchema = Type.Object({
  'idempotency-key': Type.Optional(IdempotencyKeySchema),
  'x-routing-key': Type.Optional(RoutingKeyHeaderSchema),
  prefer: Type.Optional(
    Type.String({
      maxLength: 200,
      description:
        '`wait=N` (RFC 7240): hold the reply up to N seconds for the result; 200 with the finished job, or 202 if it is still running. ' +
        'Answers 503 `MODEL_UNAVAILABLE` at once, submitting nothing, when no worker serves the model.',
    }),
  ),
});

/** The seconds of a `Prefer: wait=N` header, if it has one. */
export function preferredWaitSeconds(prefer: string | undefined): number | undefined {
  for (const preference of prefer?.split(',') ?? []) {
    const match = /^\s*wait\s*=\s*"?(\d{1,6})"?\s*(;|$)/i.exec(preference);
    if (match) return Number(match[1]);
  }
  return undefined;
}

export const JobLinksSchema = Type.Object({ self: Type.String(), cancel: Type.String() });

const exampleLinks = { self: `/v1/jobs/${EXAMPLE_JOB_ID}`, cancel: `/v1/jobs/${EXAMPLE_JOB_ID}/cancel` };

export const TensorSummarySchema = Type.Object({
  name: Type.String(),
  datatype: Type.String(),
  shape: Type.Array(Type.Integer()),
  bytes: Type.Integer(),
});
export type TensorSummary = Static<typeof TensorSummarySchema>;

/** `GET /v1/jobs/:id/inputs/:index` and `/outputs/:index`: the raw little-endian bytes of one tensor. */
export const TensorParamsSchema = Type.Object({ id: Type.String({ format: 'uuid' }), index: FiniteInteger({ minimum: 0, maximum: 63 }) });

export const JobAcceptedSchema = Type.Object(
  {
    id: Uuid,
    status: StatusSchema,
    links: JobLinksSchema,
  },
  { examples: [{ id: EXAMPLE_JOB_ID, status: 'queued', links: exampleLinks }] },
);
export type JobAccepted = Static<typeof JobAcceptedSchema>;

export const JobErrorSchema = Type.Object({ code: Type.String(), message: Type.String() });

/** A finished job of the demo mlp (features FP32 [1, 64] → logits FP32 [1, 16]) as the job list shows it: no tensors. */
const exampleJobSummary = {
  id: EXAMPLE_JOB_ID,
  model: 'mlp',
  modelVersion: 2,
  priority: 'normal',
  status: 'succeeded',
  createdAt: EXAMPLE_TIME,
  startedAt: '2025-06-02T09:30:00.004Z',
  finishedAt: '2025-06-02T09:30:00.007Z',
  queueMs: 4,
  inferMs: 1.8,
  batchSize: 8,
  batchId: '0190a1b2-9d8e-7f6a-8b5c-4d3e2f1a0b9c',
  workerId: 'box-cpu-4242',
  items: 1,
  deviceMs: 0.225,
  attempts: 1,
  cacheHit: false,
  error: null,
  metadata: { team: 'search' },
  deadline: null,
  webhookUrl: null,
  keepInputs: false,
  links: exampleLinks,
};
const exampleLogits = [0.91, -1.24, 0.07, 2.35, -0.48, 0.66, -2.01, 1.12, 0.3, -0.95, 0.58, -0.17, 1.73, -1.6, 0.42, 0.04];

export const JobSchema = Type.Object(
  {
    id: Uuid,
    model: Type.String(),
    modelVersion: Type.Integer(),
    priority: PrioritySchema,
    status: StatusSchema,
    createdAt: Type.String({ format: 'date-time' }),
    startedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    queueMs: Type.Union([Type.Integer(), Type.Null()], { description: 'Time from submit to batch start' }),
    inferMs: Type.Union([Type.Number(), Type.Null()], { description: 'Inference time of the batch the job ran in' }),
    batchSize: Type.Union([Type.Integer(), Type.Null()], { description: 'Number of jobs in that batch' }),
    batchId: Type.Union([Uuid, Type.Null()], { description: 'The batch it ran in (GET /v1/inference-batches/:id, admin)' }),
    workerId: Type.Union([Type.String(), Type.Null()], { description: 'The worker that ran it' }),
    items: Type.Union([Type.Integer(), Type.Null()], { description: 'Rows it put along the batch dimension' }),
    deviceMs: Type.Union([Type.Number(), Type.Null()], {
      description: "Its share of the batch's device time (inferMs × items ÷ the batch's items): what GET /v1/usage sums",
    }),
    device: Type.Optional(Type.String({ description: 'One job only: the device its batch ran on' })),
    provider: Type.Optional(Type.String({ description: 'One job only: the execution provider its batch ran on' })),
    modelSha256: Type.Optional(Type.String({ description: 'One job only: the sha256 of the model artifact that ran' })),
    attempts: Type.Integer(),
    cacheHit: Type.Boolean({
      description: "Answered from the model version's response cache: the stored result of an earlier job with the same inputs; the model did not run",
    }),
    error: Type.Union([JobErrorSchema, Type.Null()]),
    inputs: Type.Optional(Type.Array(TensorSummarySchema, { description: 'Input headers; the bytes are at links.inputs + /:index' })),
    outputs: Type.Optional(Type.Array(OutputTensorSchema)),
    metadata: Type.Record(Type.String(), Type.String()),
    deadline: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
    webhookUrl: Type.Union([Type.String(), Type.Null()]),
    keepInputs: Type.Optional(Type.Boolean({ description: 'The inputs are kept as long as the job (asked at submit)' })),
    inputsDroppedAt: Type.Optional(
      Type.String({ format: 'date-time', description: 'Only once its inputs were dropped (input retention): `inputs` is then empty' }),
    ),
    purgedAt: Type.Optional(
      Type.String({
        format: 'date-time',
        description: 'Only on a tombstone (job lists): when its data was purged. GET of a purged job answers 410 `JOB_PURGED`',
      }),
    ),
    purgeReason: Type.Optional(
      StringEnum(PURGE_REASONS, { description: 'Only on a tombstone: `retention` (its retention ran out) or `deleted` (DELETE /v1/jobs/:id)' }),
    ),
    links: JobLinksSchema,
  },
  {
    $id: 'Job',
    examples: [
      {
        ...exampleJobSummary,
        inputs: [{ name: 'features', datatype: 'FP32', shape: [1, 64], bytes: 256 }],
        outputs: [{ name: 'logits', datatype: 'FP32', shape: [1, 16], data: exampleLogits, bytes: 64 }],
      },
    ],
  },
);
export type Job = Static<typeof JobSchema>;

export const JobParamsSchema = Type.Object({ id: Uuid });

/** What a purged job keeps: its identity and accounting, without inputs, outputs, metadata, webhook URL or error message. */
export const JobTombstoneSchema = Type.Omit(JobSchema, ['inputs', 'outputs'], {
  description: 'The tombstone of a purged job',
  examples: [{ ...exampleJobSummary, metadata: {}, purgedAt: '2025-06-09T09:30:00.007Z', purgeReason: 'retention' }],
});
export type JobTombstone = Static<typeof JobTombstoneSchema>;

export const GetJobQuerySchema = Type.Object({
  encoding: Type.Optional(StringEnum(['json', 'base64'] as const, { default: 'json', description: 'How inline output data is written' })),
});

const HEX = '[0-9a-fA-F]';
/** A uuid's first digits, plain (`0190a1b2`) or as the uuid prints (`0190a1b2-7c3d`). */
const JOB_ID_PREFIX = `^(${HEX}{1,32}|${HEX}{8}(-${HEX}{0,4}(-${HEX}{0,4}(-${HEX}{0,4}(-${HEX}{0,12})?)?)?)?)$`;

/** Which jobs a list or a bulk action covers; every field narrows it. */
export const JobFilterSchema = Type.Object(
  {
    status: Type.Optional(StatusSchema),
    model: Type.Optional(StorableText({ maxLength: 200 })),
    priority: Type.Optional(PrioritySchema),
    createdAfter: Type.Optional(DateTimeInput()),
    createdBefore: Type.Optional(DateTimeInput()),
    id: Type.Optional(Type.String({ pattern: JOB_ID_PREFIX, description: 'A job id or the first digits of one, with or without dashes' })),
    keyId: Type.Optional(Type.String({ format: 'uuid', description: "Only this API key's jobs (an admin key sees every key's; any other only its own)" })),
    errorCode: Type.Optional(Type.String({ pattern: '^[A-Z][A-Z0-9_]{0,63}$', description: 'The error code of the last failure, e.g. `MODEL_LOAD_FAILED`' })),
    errorText: Type.Optional(StorableText({ minLength: 1, maxLength: 200, description: 'Text anywhere in the error message, case-insensitive' })),
    batch: Type.Optional(
      Type.String({ pattern: '^batch_[0-9a-f]{32}$', description: 'Only the jobs a Batch API batch submitted for its lines (`POST /v1/batches`)' }),
    ),
  },
  { additionalProperties: false },
);
export type JobFilterQuery = Static<typeof JobFilterSchema>;

export const ListJobsQuerySchema = Type.Object(
  {
    ...JobFilterSchema.properties,
    limit: Type.Optional(FiniteInteger({ minimum: 1, maximum: 500, default: 50 })),
    cursor: Type.Optional(Type.String({ maxLength: 200, description: 'Opaque cursor from nextCursor' })),
  },
  { additionalProperties: false },
);
export type ListJobsQuery = Static<typeof ListJobsQuerySchema>;

export const JobListSchema = Type.Object(
  {
    // Omit keeps Job's example, outputs and all: the summary's own replaces it.
    items: Type.Array(Type.Omit(JobSchema, ['outputs'], { examples: [exampleJobSummary] })),
    nextCursor: Type.Union([Type.String(), Type.Null()], {
      description:
        'Pass as cursor for the next page; null at the end of the list. A page reads at most 32 days of jobs: one whose filter matched ' +
        'fewer than limit jobs in them has fewer items (maybe none) and a cursor that goes on further back.',
    }),
  },
  { examples: [{ items: [exampleJobSummary], nextCursor: 'MjAyNS0wNi0wMlQwOTozMDowMC4wMDBafDAxOTBhMWIyLTdjM2QtN2U0Zi04YTViLTZjN2Q4ZTlmMGExYg' }] },
);
export type JobList = Static<typeof JobListSchema>;

/** `GET /v1/jobs/:id/events`: `Last-Event-ID` is the id of the last event the client saw (EventSource sends it on reconnect). */
export const JobEventsHeadersSchema = Type.Object({
  'last-event-id': Type.Optional(Type.String({ pattern: '^[0-9]{1,9}$', description: 'Resume after this event: only later statuses are sent' })),
});

/** The `data` of an `event: status` on a job's event stream. */
export const JobStatusEventSchema = Type.Object(
  {
    id: Uuid,
    status: StatusSchema,
    attempts: Type.Integer({ description: 'Attempts started so far' }),
    error: Type.Optional(
      Type.Object(JobErrorSchema.properties, { description: 'The last error: on a failed job, or one queued again after a failed attempt' }),
    ),
  },
  { description: 'The `data` of an `event: status`' },
);
export type JobStatusEvent = Static<typeof JobStatusEventSchema>;
