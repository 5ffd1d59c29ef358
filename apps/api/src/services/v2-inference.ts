import {
  checkInputsAgainstSignature,
  decodeBase64,
  encodeTensorJson,
  isDataType,
  isErrorCode,
  type DataType,
  type ModelSignature,
  type V2InferBody,
  type V2InferResponse,
} from '@inferq/contracts';
import { AppError, type ProblemItem } from '@inferq/core';
import type { JobRecord, ModelRecord } from '@inferq/db';
import type { JobsService } from './jobs-service.ts';

// Maps the Open Inference Protocol (KServe v2) onto inferq jobs: one request is one job.

export const V2_PLATFORM = 'onnxruntime_onnx';

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

/** A job that ended without outputs, as the error the caller gets: the catalogue status of its code (400 for bad input data, 5xx for the rest). */
export function jobFailure(job: JobRecord): AppError {
  if (job.status === 'canceled') return new AppError('INFERENCE_FAILED', `job ${job.id} was canceled before it ran`);
  const code = isErrorCode(job.errorCode) && job.errorCode !== 'INTERNAL' ? job.errorCode : 'INFERENCE_FAILED';
  return new AppError(code, `job ${job.id} ${job.status}: ${job.errorMessage ?? job.errorCode ?? 'no reason recorded'}`);
}

/** The finished job's outputs as v2 JSON tensors, only the requested ones; outputs kept in S3 are read back. */
export async function toInferResponse(
  job: JobRecord,
  body: V2InferBody,
  jobs: Pick<JobsService, 'readTensor'>,
  ownerKeyId: string | null,
): Promise<V2InferResponse> {
  const wanted = body.outputs && new Set(body.outputs.map((o) => o.name));
  const stored = (job.outputs ?? []).map((t, index) => ({ t, index })).filter(({ t }) => !wanted || wanted.has(t.name));
  const outputs = await Promise.all(
    stored.map(async ({ t, index }) => {
      const bytes = t.key ? (await jobs.readTensor(job.id, ownerKeyId, 'outputs', index)).bytes : (decodeBase64(t.b64 ?? '') ?? new Uint8Array());
      return { name: t.name, datatype: t.datatype, shape: t.shape, data: encodeTensorJson(t.datatype, bytes) };
    }),
  );
  return { model_name: job.modelName, model_version: String(job.modelVersion), id: body.id ?? job.id, outputs };
}
