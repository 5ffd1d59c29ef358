import { Type, type Static } from '@sinclair/typebox';

/** RFC 9457 problem details, with inferq's stable `code`. Every 4xx/5xx body has this shape. */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI reference naming the problem type' }),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: 'Stable error code from the catalogue, e.g. INPUT_SHAPE_MISMATCH' }),
    detail: Type.Optional(Type.String()),
    instance: Type.Optional(Type.String({ description: 'Request id' })),
    errors: Type.Optional(
      Type.Array(Type.Object({ pointer: Type.String(), code: Type.String(), detail: Type.String() })),
    ),
  },
  { $id: 'Problem', description: 'RFC 9457 problem details' },
);
export type Problem = Static<typeof ProblemSchema>;

export const problemResponses = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((s) => [s, Type.Ref(ProblemSchema)]));
