import {
  binaryOutputChoice,
  checkInputsAgainstSignature,
  encodeInferResponse,
  isDataType,
  sliceBinaryTensors,
  type DataType,
  type FramedBody,
  type ModelSignature,
  type RawTensor,
  type V2InferBody,
} from '@inferq/contracts';
import { AppError, type ProblemItem } from '@inferq/core';
import type { JobRecord, ModelRecord } from '@inferq/db';
import { framingError } from '../jobs/intake/submit-body.ts';
import type { SubmitTensor } from '../jobs/intake/submit-inputs.ts';

// Maps the Open Inference Protocol (KServe v2) onto inferq jobs: one request is one job.

const V2_PLATFORM = 'onnxruntime_onnx';

/** The job reference for a v2 path: `name`, or `name:version`. */
export const modelRef = (name: string, version?: string): string => (version === undefined ? name : `${name}:${version}`);

export function toModelMetadata(model: ModelRecord, versions: readonly number[]) {
  const tensor = ({ name, datatype, shape }: ModelSignature['inputs'][number]) => ({ name, datatype, shape });
  return {
    name: model.name,
    versions: versions.map(String),
    platform: V2_PLATFORM,
    inputs: model.signature.inputs.map(tensor),
    outputs: model.signature.outputs.map(tensor),
  };
}

const reject = (items: ProblemItem[]): never => {
  const first = items[0]!;
  throw new AppError(first.code as ConstructorParameters<typeof AppError>[0], first.detail, { errors: items });
};

/**
 * The cheap checks (datatypes, names, shapes, requested outputs) before a
 * worker is looked for, so a malformed request is a 400 whether or not one
 * runs. The data itself is decoded once, when the job is submitted.
 */
export function checkInferRequest(body: V2InferBody, signature: ModelSignature): void {
  const unsupported = body.inputs.flatMap((t, i) =>
    isDataType(t.datatype)
      ? []
      : [{ pointer: `/body/inputs/${i}/datatype`, code: 'DATATYPE_UNSUPPORTED', detail: `datatype "${t.datatype.slice(0, 20)}" is not supported` }],
  );
  if (unsupported.length > 0) reject(unsupported);
  const problems = checkInputsAgainstSignature(
    body.inputs.map((t) => ({ name: t.name, datatype: t.datatype as DataType, shape: t.shape })),
    signature,
  );
  if (problems.length > 0) reject(problems.map((p) => ({ ...p, pointer: `/body${p.pointer}` })));
  const outputs = new Set(signature.outputs.map((o) => o.name));
  const unknown = (body.outputs ?? []).flatMap((o, i) =>
    outputs.has(o.name)
      ? []
      : [
          {
            pointer: `/body/outputs/${i}/name`,
            code: 'VALIDATION_FAILED',
            detail: `output "${o.name.slice(0, 100)}" is not in the model signature (expected ${[...outputs].join(', ')})`,
          },
        ],
  );
  if (unknown.length > 0) reject(unknown);
}

/** The output names a request asks for; undefined for all of them. */
export const requestedOutputs = (body: V2InferBody): ReadonlySet<string> | undefined => body.outputs && new Set(body.outputs.map((o) => o.name));

/**
 * A request's inputs as the jobs service takes them: the binary section's
 * slices (binary extension: `binary_data_size`) as raw bytes, the others'
 * JSON `data`. `binary` is the section after the JSON header (empty for a JSON body).
 */
export function toSubmitInputs(body: V2InferBody, binary: Uint8Array): SubmitTensor[] {
  const slices = sliceBinaryTensors(body.inputs, binary, 'inputs');
  if (!slices.ok) throw framingError(slices);
  return body.inputs.map(({ name, datatype, shape, data }, i) => {
    const bytes = slices.value[i];
    if (bytes) return { name, datatype, shape, bytes };
    if (data === undefined)
      return reject([{ pointer: `/body/inputs/${i}/data`, code: 'INPUT_DATA_INVALID', detail: `input "${name}" has neither data nor binary_data_size` }]);
    return { name, datatype, shape, data };
  });
}

/** Which outputs the request wants as binary data (`binary_data_output`, per-output `binary_data`); checked before the job runs. */
export function outputChoice(body: V2InferBody): (name: string) => boolean {
  const choice = binaryOutputChoice(body as unknown as Record<string, unknown>);
  if (!choice.ok) throw framingError(choice);
  return choice.value;
}

/** The finished job's outputs (already only the requested ones) as the response body: all JSON, or framed when any output is binary. */
export function toInferResponse(job: JobRecord, body: V2InferBody, outputs: readonly RawTensor[], isBinary: (name: string) => boolean): FramedBody {
  return encodeInferResponse(
    {
      model_name: job.modelName,
      model_version: String(job.modelVersion),
      id: body.id ?? job.id,
      outputs: outputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: t.shape, bytes: t.data })),
    },
    isBinary,
  );
}
