import { Type, type Static } from '@sinclair/typebox';
import { PRIORITIES } from '../job-status.ts';
import { BinaryDataSizeSchema, InputTensorSchema } from '../tensors.ts';
import { StringEnum } from '../string-enum.ts';
import { ProblemSchema } from './problem.ts';

// KServe v2 / Open Inference Protocol, HTTP/REST: JSON bodies and the binary
// tensor data extension. Names follow the protocol (snake_case).

export const V2ModelParamsSchema = Type.Object({ name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }) });
export const V2ModelVersionParamsSchema = Type.Object({
  name: Type.String({ pattern: '^[a-z0-9][a-z0-9._-]{0,62}$' }),
  version: Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'A model version number, as the protocol names it: a string' }),
});

export const V2LiveSchema = Type.Object({ live: Type.Boolean() }, { examples: [{ live: true }] });
export const V2ReadySchema = Type.Object({ ready: Type.Boolean() }, { examples: [{ ready: true }] });

export const V2ServerMetadataSchema = Type.Object(
  {
    name: Type.String(),
    version: Type.String(),
    extensions: Type.Array(Type.String()),
  },
  { examples: [{ name: 'inferq', version: '0.1.0', extensions: [] }] },
);

const MetadataTensorSchema = Type.Object({
  name: Type.String(),
  datatype: Type.String(),
  shape: Type.Array(Type.Integer(), { description: '-1 for a dynamic dimension' }),
});

export const V2ModelMetadataSchema = Type.Object(
  {
    name: Type.String(),
    versions: Type.Array(Type.String()),
    platform: Type.String(),
    inputs: Type.Array(MetadataTensorSchema),
    outputs: Type.Array(MetadataTensorSchema),
  },
  {
    examples: [
      {
        name: 'mlp',
        versions: ['1', '2'],
        platform: 'onnxruntime_onnx',
        inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }],
        outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 16] }],
      },
    ],
  },
);

export const V2InferInputSchema = Type.Object(
  {
    ...InputTensorSchema.properties,
    data: Type.Optional({ ...InputTensorSchema.properties.data, description: 'Row-major values; absent when `parameters.binary_data_size` is given' }),
    parameters: Type.Optional(
      Type.Object(
        { binary_data_size: Type.Optional(BinaryDataSizeSchema) },
        { additionalProperties: true, maxProperties: 64, description: 'Per-input parameters: `binary_data_size` (binary extension); others are ignored' },
      ),
    ),
  },
  { additionalProperties: false },
);

export const V2InferBodySchema = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 256, description: 'Echoed in the response' })),
    // The binary extension's own example request carries these; the path names the model, so (as Triton) they are ignored.
    model_name: Type.Optional(Type.String({ maxLength: 256, description: 'Accepted and ignored: the path names the model' })),
    model_version: Type.Optional(Type.String({ maxLength: 64, description: 'Accepted and ignored: the path names the version' })),
    parameters: Type.Optional(
      Type.Object(
        {
          priority: Type.Optional(
            Type.Union([StringEnum(PRIORITIES), Type.Integer({ minimum: 0, maximum: 3 })], {
              description: "Queue priority; normal when absent. Triton's integers too: 1 high, 2 normal, 3 low, 0 the default (normal)",
            }),
          ),
          binary_data_output: Type.Optional(Type.Boolean({ description: 'Binary extension: every output as binary data unless it says otherwise' })),
        },
        {
          additionalProperties: true,
          maxProperties: 64,
          description: 'Request parameters: `priority` sets the queue priority, `binary_data_output` asks for binary outputs; others are ignored',
        },
      ),
    ),
    inputs: Type.Array(V2InferInputSchema, { minItems: 1, maxItems: 64 }),
    outputs: Type.Optional(
      Type.Array(
        Type.Object(
          {
            name: Type.String({ minLength: 1, maxLength: 256 }),
            parameters: Type.Optional(
              Type.Object(
                { binary_data: Type.Optional(Type.Boolean({ description: 'Binary extension: this output as binary data' })) },
                { additionalProperties: true, maxProperties: 64, description: 'Per-output parameters: `binary_data`; others are ignored' },
              ),
            ),
          },
          { additionalProperties: false },
        ),
        { maxItems: 64, description: 'Only these outputs are returned; all of them when absent' },
      ),
    ),
  },
  {
    additionalProperties: false,
    // "hello world" for the demo transformer encoder ([CLS] hello world [SEP] in its tokenizer): valid as written.
    examples: [
      {
        id: 'req-42',
        parameters: { priority: 'high' },
        inputs: [
          { name: 'input_ids', datatype: 'INT64', shape: [1, 4], data: [2, 516, 209, 3] },
          { name: 'attention_mask', datatype: 'INT64', shape: [1, 4], data: [1, 1, 1, 1] },
        ],
        outputs: [{ name: 'pooled' }],
      },
    ],
  },
);
export type V2InferBody = Static<typeof V2InferBodySchema>;

/** Triton's integer priorities (1 is the highest; 0 asks for the model's default) as inferq's levels. */
const V2_INTEGER_PRIORITIES = ['normal', 'high', 'normal', 'low'] as const;

/** A request's `parameters.priority` as an inferq priority: normal when absent. */
export const v2Priority = (priority: string | number | undefined): (typeof PRIORITIES)[number] =>
  typeof priority === 'number' ? V2_INTEGER_PRIORITIES[priority]! : ((priority as (typeof PRIORITIES)[number] | undefined) ?? 'normal');

export const V2InferResponseSchema = Type.Object(
  {
    model_name: Type.String(),
    model_version: Type.String(),
    id: Type.String({ description: 'The request `id`, else the job id' }),
    outputs: Type.Array(
      Type.Object({
        name: Type.String(),
        datatype: Type.String(),
        shape: Type.Array(Type.Integer()),
        data: Type.Optional(
          Type.Array(Type.Union([Type.Number(), Type.Boolean(), Type.String()]), {
            description: 'Row-major, flat; INT64 and UINT64 beyond 2^53 are strings. Absent for an output sent as binary data',
          }),
        ),
        parameters: Type.Optional(Type.Object({ binary_data_size: Type.Optional(BinaryDataSizeSchema) })),
      }),
    ),
  },
  {
    description:
      "The requested outputs, flat and row-major. The example's `pooled` is cut to 4 values: the demo transformer's is [1, 64]. " +
      'When the request asks for binary outputs (`binary_data_output`, `binary_data`), this JSON is the first `Inference-Header-Content-Length` ' +
      'bytes of an application/octet-stream body and those outputs carry `parameters.binary_data_size` instead of `data`; their bytes follow, in order.',
    examples: [
      {
        model_name: 'transformer',
        model_version: '1',
        id: 'req-42',
        outputs: [{ name: 'pooled', datatype: 'FP32', shape: [1, 4], data: [0.132, -0.587, 0.301, 0.044] }],
      },
    ],
  },
);
export type V2InferResponse = Static<typeof V2InferResponseSchema>;

/** Problem details plus the protocol's `{ "error": "..." }` member, so v2 clients and RFC 9457 clients both read it. */
export const V2ProblemSchema = Type.Object(
  { ...ProblemSchema.properties, error: Type.String({ description: 'The Open Inference Protocol error message' }) },
  { description: 'RFC 9457 problem details with the v2 `error` member' },
);

export const v2ProblemResponses = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, V2ProblemSchema]));
