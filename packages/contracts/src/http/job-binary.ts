import { Type, type Static } from '@sinclair/typebox';
import { INFERENCE_HEADER_CONTENT_LENGTH } from '../binary-framing/split-body.ts';
import { DataTypeSchema } from '../tensors.ts';
import { JobSchema } from './jobs.ts';

// A job in the binary framing (issue 18, the lead's spec item 3): the JSON
// header is the job as GET /v1/jobs/:id shows it, each output with
// parameters.binary_data_size instead of data or url; the outputs' raw
// little-endian bytes follow it in output order.

/** The media type that asks for (and answers) a framed job. */
export const FRAMED_JOB_CONTENT_TYPE = 'application/octet-stream';

/** An output in a framed job's header: its bytes are in the binary section, not here. */
export const FramedOutputTensorSchema = Type.Object({
  name: Type.String(),
  datatype: DataTypeSchema,
  shape: Type.Array(Type.Integer()),
  bytes: Type.Integer(),
  parameters: Type.Object({ binary_data_size: Type.Integer({ minimum: 0, description: 'Its bytes in the binary section (equal to `bytes`)' }) }),
});
export type FramedOutputTensor = Static<typeof FramedOutputTensorSchema>;

/** The JSON header of a framed job. */
export const FramedJobHeaderSchema = Type.Composite([
  Type.Omit(JobSchema, ['outputs']),
  Type.Object({ outputs: Type.Optional(Type.Array(FramedOutputTensorSchema)) }),
]);
export type FramedJobHeader = Static<typeof FramedJobHeaderSchema>;

/** The OpenAPI description of a framed job body (`application/octet-stream`). */
export const FramedJobBodySchema = Type.Unsafe<Uint8Array>({
  type: 'string',
  format: 'binary',
  description:
    'The binary data extension of the Open Inference Protocol: the first `Inference-Header-Content-Length` bytes are the job JSON (UTF-8) ' +
    'as `application/json` answers it, except that each output carries `parameters.binary_data_size` instead of `data` or `url`; ' +
    "the outputs' raw little-endian bytes follow, back to back in output order (BYTES: each element a 4-byte little-endian length, then its bytes). " +
    'A job without outputs (queued, running, failed) is the JSON header alone.',
});

/** A 200 that is the job as JSON or, asked with `Accept: application/octet-stream`, the framed job (a route's response schema, per content type). */
export const JobOrFramedJobResponse = {
  description: 'The job: JSON, or in the binary framing when `Accept` prefers `application/octet-stream`',
  headers: { [INFERENCE_HEADER_CONTENT_LENGTH]: Type.Integer({ description: 'Framed only: the length of the JSON header in bytes' }) },
  content: {
    'application/json': { schema: JobSchema, example: (JobSchema.examples as unknown[])[0] },
    [FRAMED_JOB_CONTENT_TYPE]: { schema: FramedJobBodySchema },
  },
};
