import { Type, type Static } from '@sinclair/typebox';
import { JobFilterSchema } from './jobs.ts';
import { FiniteInteger } from './request-values.ts';

/** The most jobs one bulk call acts on. */
export const BULK_JOB_LIMIT_MAX = 10_000;

/** `POST /v1/jobs/bulk-cancel` and `/bulk-retry`: which jobs, how many at most, and whether only to count them. */
export const BulkJobActionBodySchema = Type.Object(
  {
    filter: Type.Object(JobFilterSchema.properties, {
      additionalProperties: false,
      description: 'The filter of `GET /v1/jobs` (no cursor or limit); at least one field, or the call is refused with `JOB_FILTER_EMPTY`',
    }),
    limit: Type.Optional(FiniteInteger({ minimum: 1, maximum: BULK_JOB_LIMIT_MAX, default: 1000, description: 'Act on at most this many jobs, oldest first' })),
    // No `type` keyword, so the server's type coercion cannot read null, 0 or "false" as a real run: only true or false pass.
    dryRun: Type.Optional(
      Type.Unsafe<boolean>({ enum: [true, false], default: false, description: 'Only count the matching jobs; touch none and audit nothing' }),
    ),
  },
  {
    additionalProperties: false,
    examples: [{ filter: { model: 'mlp', status: 'failed', errorCode: 'MODEL_LOAD_FAILED' }, limit: 1000, dryRun: true }],
  },
);
export type BulkJobActionBody = Static<typeof BulkJobActionBodySchema>;

export const BulkJobActionResultSchema = Type.Object(
  {
    matched: Type.Integer({ description: 'Jobs the filter matches that the action applies to (queued to cancel; failed, canceled or expired to retry)' }),
    touched: Type.Integer({ description: 'Jobs canceled, or retried as new jobs; 0 on a dry run' }),
    skipped: Type.Integer({
      description: 'Jobs within the limit left as they were: a worker took it meanwhile (cancel), or its retry was refused (retry); 0 on a dry run',
    }),
    truncated: Type.Boolean({ description: 'More jobs matched than `limit`: call again to act on the rest' }),
    dryRun: Type.Boolean(),
  },
  { examples: [{ matched: 1250, touched: 998, skipped: 2, truncated: true, dryRun: false }] },
);
export type BulkJobActionResult = Static<typeof BulkJobActionResultSchema>;

/** True when the filter has no field: a bulk action refuses it rather than act on every job. */
export const isEmptyJobFilter = (filter: Record<string, unknown>): boolean => Object.values(filter).every((v) => v === undefined);
