import { createHash } from 'node:crypto';
import { Transform } from 'node:stream';
import type { Multipart } from '@fastify/multipart';
import { byteLengthOf, isDataType, type ErrorCode, type SubmitInputTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { TensorStore } from '@inferq/storage';
import { checkOneSource, jsonSubmitTensor } from './submit-body.ts';
import type { JobSlot, SubmitTensor } from './submit-inputs.ts';

// A multipart/form-data submit: the `request` part (the JSON body, binary
// inputs without `data`), then one part `input:<name>` per binary input with
// its raw bytes. Each part streams into the job's slot as it arrives (inline
// when small, else an S3 object), hashed on the way: never held whole.

/** The field name of the JSON body's part, and the prefix of the inputs' parts. */
const REQUEST_PART = 'request';
const INPUT_PART_PREFIX = 'input:';

const fail = (code: ErrorCode, pointer: string, detail: string): AppError => new AppError(code, detail, { errors: [{ pointer, code, detail }] });

/** The next part, with busboy's bare parse errors (no boundary, a body cut short) as 400s. */
async function nextPart(parts: AsyncIterator<Multipart>): Promise<Multipart | undefined> {
  try {
    const next = await parts.next();
    return next.done ? undefined : next.value;
  } catch (err) {
    // Ours and @fastify/multipart's errors carry a code; busboy's do not.
    if (err instanceof Error && !('code' in err)) throw new AppError('MALFORMED_BODY', `the multipart body cannot be read: ${err.message}`);
    if (err instanceof Error && (err as { code?: unknown }).code === 'FST_INVALID_JSON_FIELD_ERROR')
      throw fail('MALFORMED_BODY', `/body/${REQUEST_PART}`, `the "${REQUEST_PART}" part is not JSON`);
    throw err;
  }
}

/**
 * Reads the first part, which must be `request`: the submit body's JSON (a
 * field, which @fastify/multipart has parsed when its Content-Type says JSON,
 * or a file part).
 */
export async function readRequestPart(parts: AsyncIterator<Multipart>, parseJson: (text: string) => unknown): Promise<unknown> {
  const part = await nextPart(parts);
  if (!part || part.fieldname !== REQUEST_PART)
    throw fail(
      'VALIDATION_FAILED',
      '/body',
      `the first part must be "${REQUEST_PART}", the JSON body; got ${part ? `"${part.fieldname.slice(0, 60)}"` : 'none'}`,
    );
  if (part.type === 'field' && typeof part.value !== 'string') return part.value;
  const text = part.type === 'file' ? (await part.toBuffer()).toString('utf8') : String(part.value);
  try {
    return parseJson(text);
  } catch (err) {
    throw fail('MALFORMED_BODY', '/body', `the "${REQUEST_PART}" part is not JSON: ${err instanceof Error ? err.message.slice(0, 200) : 'invalid'}`);
  }
}

/** How often a part is checked for a body that ended inside it; two checks without progress end it. */
const STALL_CHECK_MS = 100;

/** Zeros to fill a short part with, a chunk at a time. */
const ZEROS = Buffer.alloc(64 * 1024);

/**
 * Passes exactly `expected` bytes on, digesting them: a longer part is cut
 * there (the rest is drained), a shorter one (or one whose source fails) is
 * padded with zeros. The storage write so always ends cleanly with the length
 * it announced (an S3 PUT given fewer bytes would wait for the rest), and
 * `failure` says afterwards whether the part was the size it had to be; the
 * object written for a bad part is left to the orphan sweep.
 */
function exactly(
  source: NodeJS.ReadableStream & { readableLength?: number },
  expected: number,
  name: string,
  request: { readableEnded: boolean },
): { body: Transform; failure(): AppError | undefined; sha256(): string } {
  const digest = createHash('sha256');
  let seen = 0;
  let sourceError: Error | undefined;
  // A body cut short inside a part: busboy may report it before the part is read (the event is gone) and never end
  // the part. Once the request has ended and the part has nothing buffered and makes no progress, nothing more comes.
  let last = -1;
  const watch = setInterval(() => {
    if (!request.readableEnded || (source.readableLength ?? 0) > 0 || seen !== last) return void (last = seen);
    sourceError = new AppError('MALFORMED_BODY', `the body ends inside the part of input "${name}"`);
    clearInterval(watch);
    body.end();
  }, STALL_CHECK_MS);
  source.once('end', () => clearInterval(watch));
  const body = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      const room = Math.max(0, expected - seen);
      seen += chunk.byteLength;
      const passed = chunk.byteLength <= room ? chunk : chunk.subarray(0, room);
      digest.update(passed);
      done(null, passed.byteLength > 0 ? passed : undefined);
    },
    flush(done) {
      for (let left = expected - seen; left > 0; left -= ZEROS.byteLength) this.push(left >= ZEROS.byteLength ? ZEROS : ZEROS.subarray(0, left));
      done();
    },
  });
  source.on('error', (err: Error) => {
    clearInterval(watch);
    if (sourceError) return;
    sourceError = err;
    body.end();
  });
  source.pipe(body);
  const at = `/body/${INPUT_PART_PREFIX}${name}`;
  return {
    body,
    failure() {
      if (sourceError)
        return sourceError instanceof AppError
          ? sourceError
          : new AppError('MALFORMED_BODY', `the part of input "${name}" cannot be read: ${sourceError.message}`);
      if (seen === expected) return undefined;
      return fail('BINARY_SIZE_MISMATCH', at, `the part of input "${name}" has ${seen} bytes; its datatype and shape make ${expected}`);
    },
    sha256: () => digest.digest('hex'),
  };
}

/** The bytes an input's part must hold: its `binary_data_size` when given, else its datatype and shape's size. */
function expectedBytes(input: SubmitInputTensor, i: number): number {
  const given = input.parameters?.binary_data_size;
  if (given !== undefined) return given;
  if (!isDataType(input.datatype))
    throw fail('DATATYPE_UNSUPPORTED', `/body/inputs/${i}/datatype`, `datatype "${input.datatype.slice(0, 20)}" is not supported`);
  if (input.datatype === 'BYTES')
    throw fail('BINARY_SIZE_INVALID', `/body/inputs/${i}/parameters/binary_data_size`, `BYTES input "${input.name.slice(0, 100)}" needs binary_data_size`);
  const bytes = byteLengthOf(input.datatype, input.shape);
  if (bytes === undefined) throw fail('INPUT_SHAPE_MISMATCH', `/body/inputs/${i}/shape`, `shape of "${input.name.slice(0, 100)}" is too large`);
  return bytes;
}

export interface StreamPartsOptions {
  tensors: Pick<TensorStore, 'putTensorStream'>;
  /** Where the parts are stored: the job's pre-allocated slot. */
  slot: JobSlot;
  /** INPUT_MAX_BYTES: the declared sizes are checked against it before a part is read. */
  inputMaxBytes: number;
  /** The incoming request: a part still open once it has ended was cut short. */
  request: { readableEnded: boolean };
}

/**
 * Reads the parts after `request`: each `input:<name>` streamed into the slot
 * at that input's index. Inputs with `data` or `upload` take no part; every
 * other input takes exactly one. Answers the inputs for the jobs service.
 */
export async function streamInputParts(parts: AsyncIterator<Multipart>, inputs: readonly SubmitInputTensor[], o: StreamPartsOptions): Promise<SubmitTensor[]> {
  inputs.forEach(checkOneSource);
  const result: (SubmitTensor | undefined)[] = inputs.map(jsonSubmitTensor);
  const expected = new Map<string, { index: number; bytes: number }>();
  let total = 0;
  inputs.forEach((t, index) => {
    if (result[index] || expected.has(t.name)) return;
    const bytes = expectedBytes(t, index);
    total += bytes;
    expected.set(t.name, { index, bytes });
  });
  if (total > o.inputMaxBytes) throw new AppError('INPUT_TOO_LARGE', `the binary inputs hold ${total} bytes; the limit is ${o.inputMaxBytes}`);
  const slot = { ...o.slot, kind: 'inputs' as const };
  for (let part = await nextPart(parts); part; part = await nextPart(parts)) {
    const name = part.fieldname.startsWith(INPUT_PART_PREFIX) ? part.fieldname.slice(INPUT_PART_PREFIX.length) : undefined;
    const at = `/body/${part.fieldname.slice(0, 100)}`;
    if (part.type !== 'file' || name === undefined)
      throw fail(
        'VALIDATION_FAILED',
        at,
        `unexpected part "${part.fieldname.slice(0, 100)}": after "${REQUEST_PART}" come file parts "${INPUT_PART_PREFIX}<name>"`,
      );
    const target = expected.get(name);
    if (!target) throw fail('INPUT_UNKNOWN', at, `part "${part.fieldname.slice(0, 100)}" names no input that takes its bytes from a part`);
    if (result[target.index]) throw fail('INPUT_DUPLICATE', at, `input "${name.slice(0, 100)}" has a second part`);
    const { name: n, datatype, shape } = inputs[target.index]!;
    const piece = exactly(part.file, target.bytes, name, o.request);
    const stored = await o.tensors.putTensorStream(slot, target.index, { name: n, datatype: datatype as never, shape }, piece.body, target.bytes);
    const failure = piece.failure();
    if (failure) throw failure;
    result[target.index] = { name: n, datatype, shape, stored, sha256: piece.sha256() };
  }
  const lacking = inputs.findIndex((_t, i) => !result[i]);
  if (lacking >= 0)
    throw fail('INPUT_MISSING', `/body/${INPUT_PART_PREFIX}${inputs[lacking]!.name}`, `input "${inputs[lacking]!.name}" has no data and no part`);
  return result as SubmitTensor[];
}
