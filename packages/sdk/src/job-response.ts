import {
  FRAMED_JOB_CONTENT_TYPE,
  INFERENCE_HEADER_CONTENT_LENGTH,
  parseInferResponseBody,
  type DataType,
  type Job,
  type OutputTensor,
} from '@inferq/contracts';
import { InferqError } from './errors.ts';
import { outputArray, typedArrayFromBytes, type TypedArrayOf } from './tensors.ts';

/** An output with its values decoded: FP16 widened to a Float32Array, BOOL as 0/1 bytes (`TypedArrayOf`). */
export type DecodedOutput = Omit<OutputTensor, 'data' | 'url'> & { values: TypedArrayOf[DataType] };
/** A job read with `binary: true`: each output's values as a typed array. */
export type DecodedJob = Omit<Job, 'outputs'> & { outputs?: DecodedOutput[] };

const OCTET_STREAM = FRAMED_JOB_CONTENT_TYPE;
/** The Accept of a binary read: the framed job, else JSON from a server without it. */
export const BINARY_ACCEPT = `${OCTET_STREAM}, application/json;q=0.9, application/problem+json`;

const malformed = (detail: string) =>
  new InferqError({ type: 'about:blank', title: 'The API answered a malformed binary body', status: 0, code: 'HTTP_ERROR', detail });

/**
 * A job answer as a DecodedJob: the framed body (`Inference-Header-Content-Length`, outputs as binary sections),
 * or JSON from a server that ignored the Accept, whose outputs are decoded from their inline data or, when they
 * have only a `url`, downloaded with `download(index)`.
 */
export async function decodeJobResponse(response: Response, download: (job: Job, index: number) => Promise<Uint8Array>): Promise<DecodedJob> {
  const headerLength = response.headers.get(INFERENCE_HEADER_CONTENT_LENGTH);
  if (response.headers.get('content-type')?.startsWith(OCTET_STREAM) && headerLength !== null) {
    const parsed = parseInferResponseBody(new Uint8Array(await response.arrayBuffer()), Number(headerLength));
    if (!parsed.ok) throw malformed(`${parsed.code}: ${parsed.detail}`);
    const job = parsed.value.header as unknown as Omit<Job, 'outputs'> & { outputs?: (OutputTensor & { parameters?: unknown })[] };
    if (!job.outputs) return job as DecodedJob;
    const outputs = job.outputs.map(({ data, url: _url, parameters: _parameters, ...head }, i) => {
      const bytes = parsed.value.tensors[i];
      if (bytes) return { ...head, values: typedArrayFromBytes(head.datatype as DataType, bytes) };
      return { ...head, values: outputArray({ ...head, data }) };
    });
    return { ...job, outputs };
  }
  return decodeJsonJob((await response.json()) as Job, download);
}

/** A JSON job's outputs decoded: inline data, or the raw download of an output that has only a `url`. */
export async function decodeJsonJob(job: Job, download: (job: Job, index: number) => Promise<Uint8Array>): Promise<DecodedJob> {
  if (!job.outputs) return job as DecodedJob;
  const outputs = await Promise.all(
    job.outputs.map(async ({ data, url: _url, ...head }, i) => ({
      ...head,
      values: data !== undefined ? outputArray({ ...head, data }) : typedArrayFromBytes(head.datatype, await download(job, i)),
    })),
  );
  return { ...job, outputs };
}
