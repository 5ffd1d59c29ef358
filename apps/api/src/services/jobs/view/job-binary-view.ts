import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import accepts from 'accepts';
import type { FastifyReply } from 'fastify';
import { FRAMED_JOB_CONTENT_TYPE, INFERENCE_HEADER_CONTENT_LENGTH, type FramedJobHeader, type StoredTensor } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import { TensorNotFoundError, type TensorStore } from '@inferq/storage';
import { toJobHead } from './job-view.ts';

// A job in the binary framing (the lead's spec for issue 18, item 3): its JSON
// as GET /v1/jobs/:id shows it, outputs reduced to parameters.binary_data_size,
// then the outputs' bytes in output order, streamed from the tensor store one
// after another: an S3 object is never held whole, and Content-Length is known
// up front from the recorded sizes.

type TensorReader = Pick<TensorStore, 'readTensorStream'>;

/** A framed job ready to send: its headers (content type, header length, content length) and its body, read lazily. */
export interface FramedJob {
  headers: { 'content-type': string; [INFERENCE_HEADER_CONTENT_LENGTH]: number; 'content-length': number };
  /** The JSON header's length in bytes (`Inference-Header-Content-Length`). */
  headerBytes: number;
  /** The whole body's length: the JSON header plus every output's bytes. */
  contentLength: number;
  /** Opens no tensor until it is read; destroying it closes the tensor being read. */
  body: Readable;
}

/** The framed job's JSON header: the job as GET shows it, each output with `parameters.binary_data_size` instead of `data` or `url`. */
function framedJobHeader(r: JobRecord): FramedJobHeader {
  const head = toJobHead(r);
  if (!r.outputs) return head;
  const outputs = r.outputs.map(({ name, datatype, shape, bytes }) => ({ name, datatype, shape, bytes, parameters: { binary_data_size: bytes } }));
  return { ...head, outputs };
}

/** The JSON header, then each output's bytes; a tensor whose stream is not its recorded size ends the body with an error (never a shifted frame). */
async function* framedBytes(header: Uint8Array, outputs: readonly StoredTensor[], tensors: TensorReader): AsyncGenerator<Uint8Array> {
  yield header;
  for (const t of outputs) {
    let sent = 0;
    for await (const chunk of (await tensors.readTensorStream(t)) as AsyncIterable<Uint8Array | string>) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      sent += bytes.byteLength;
      if (sent > t.bytes) throw new TensorNotFoundError(t.name, 'wrong-size');
      yield bytes;
    }
    if (sent !== t.bytes) throw new TensorNotFoundError(t.name, 'wrong-size');
  }
}

/** A job in the binary framing. Only the JSON header is built here; the tensors are opened one at a time as the body is read. */
export function framedJob(r: JobRecord, tensors: TensorReader): FramedJob {
  const header = Buffer.from(JSON.stringify(framedJobHeader(r)));
  const outputs = r.outputs ?? [];
  const contentLength = outputs.reduce((n, t) => n + t.bytes, header.byteLength);
  return {
    headers: { 'content-type': FRAMED_JOB_CONTENT_TYPE, [INFERENCE_HEADER_CONTENT_LENGTH]: header.byteLength, 'content-length': contentLength },
    headerBytes: header.byteLength,
    contentLength,
    body: Readable.from(framedBytes(header, outputs, tensors), { objectMode: false }),
  };
}

/** Sends a job in the binary framing (GET /v1/jobs/:id, and any route that answers a job to `Accept: application/octet-stream`). */
export function sendFramedJob(reply: FastifyReply, r: JobRecord, tensors: TensorReader): FastifyReply {
  const framed = framedJob(r, tensors);
  return reply.headers(framed.headers).send(framed.body);
}

const JOB_MEDIA_TYPES = ['application/json', FRAMED_JOB_CONTENT_TYPE];

/**
 * Whether the request's Accept prefers the framed job to JSON (q-values weigh; on a tie the
 * Accept header's order, then JSON). No Accept, `*\/*`, or nothing acceptable: JSON.
 */
export const prefersFramedJob = (req: IncomingMessage): boolean => accepts(req).type(JOB_MEDIA_TYPES) === FRAMED_JOB_CONTENT_TYPE;
