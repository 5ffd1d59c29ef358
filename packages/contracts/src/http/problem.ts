import { Type, type Static } from '@sinclair/typebox';
import { PURGE_REASONS } from '../job-status.ts';
import { StringEnum } from '../string-enum.ts';
import { EXAMPLE_REQUEST_ID } from './examples.ts';
import { JobTombstoneSchema } from './jobs.ts';

/** RFC 9457 problem details, with inferq's stable `code`. Every 4xx/5xx body has this shape. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable error code from the catalogue, e.g. INPUT_SHAPE_MISMATCH' }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String({ description: 'Request id' })),
    errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), code: Type.String(), detail: Type.String() }))),
    // Extension members of 410 JOB_PURGED, JOB_INPUTS_DROPPED and JOB_LOST.
    purgedAt: Type.Optional(Type.String({ format: 'date-time', description: 'JOB_PURGED: when the job was purged' })),
    purgeReason: Type.Optional(StringEnum(PURGE_REASONS, { description: 'JOB_PURGED: `retention` or `deleted`' })),
    job: Type.Optional(Type.Omit(JobTombstoneSchema, [], { description: 'JOB_PURGED: what was kept, the tombstone' })),
    inputsDroppedAt: Type.Optional(Type.String({ format: 'date-time', description: 'JOB_INPUTS_DROPPED: when the inputs were dropped' })),
    lostAt: Type.Optional(Type.String({ format: 'date-time', description: "JOB_LOST: when a worker found the job's record gone" })),
  },
  {
    $id: 'Problem',
    description: 'RFC 9457 problem details',
    examples: [
      {
        type: 'https://inferq.dev/problems/input-shape-mismatch',
        title: 'An input has the wrong shape',
        status: 400,
        code: 'INPUT_SHAPE_MISMATCH',
        detail: 'input "features" must have shape [?,64], got [1,4]',
        instance: EXAMPLE_REQUEST_ID,
        errors: [{ pointer: '/inputs/0/shape', code: 'INPUT_SHAPE_MISMATCH', detail: 'input "features" must have shape [?,64], got [1,4]' }],
      },
    ],
  },
);
export type Problem = Static<typeof ProblemSchema>;

export const problemResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, Type.Ref(ProblemSchema)]));
