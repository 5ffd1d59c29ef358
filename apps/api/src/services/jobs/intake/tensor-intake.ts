import {
  checkInputsAgainstSignature,
  checkTensorBytes,
  decodeTensorData,
  isDataType,
  minByteLengthOf,
  type DataType,
  type ModelSignature,
  type StoredTensor,
} from '@inferq/contracts';
import { AppError, type ProblemItem } from '@inferq/core';
import type { SubmitTensor } from './submit-inputs.ts';

const reject = (items: ProblemItem[]): never => {
  const first = items[0]!;
  throw new AppError(first.code as ConstructorParameters<typeof AppError>[0], first.detail, { errors: items });
};

/** A request tensor with a checked datatype and its byte size. */
interface IntakeHead {
  name: string;
  datatype: DataType;
  shape: number[];
  /** Its size in bytes, from datatype and shape. */
  byteLength: number;
}

/**
 * An input after intake: its bytes in hand (decoded once from JSON or base64,
 * or a binary body's raw bytes as they came), already stored in the job's
 * slot (a streamed part), or an upload still to claim.
 */
export type DecodedInput = IntakeHead &
  ({ data: Uint8Array } | { stored: StoredTensor; sha256: string } | { upload: string; data?: undefined; stored?: undefined });

/** Whether an input still has to be placed in the job's slot by the caller (stored inline or in S3, or claimed). */
export const hasBytes = (t: DecodedInput): t is IntakeHead & { data: Uint8Array } => 'data' in t && t.data !== undefined;

/**
 * The checks a submit's tensors pass before any of their bytes are looked at: datatypes, the size limit (BYTES
 * counted at their least), names, datatypes and shapes against `signature` when given. A multipart submit runs
 * them before its parts are stored.
 */
export function checkInputHeads(
  inputs: ReadonlyArray<{ name: string; datatype: string; shape: number[] }>,
  inputMaxBytes: number,
  signature?: ModelSignature,
): IntakeHead[] {
  const unsupported = inputs.flatMap((t, i) =>
    isDataType(t.datatype)
      ? []
      : [{ pointer: `/inputs/${i}/datatype`, code: 'DATATYPE_UNSUPPORTED', detail: `datatype "${String(t.datatype).slice(0, 20)}" is not supported` }],
  );
  if (unsupported.length > 0) reject(unsupported);
  let total = 0;
  const heads = inputs.map((t, i): IntakeHead => {
    const datatype = t.datatype as DataType;
    // BYTES elements have no fixed size: the least they take (a 4-byte length each) is counted here, what they hold below.
    const byteLength = minByteLengthOf(datatype, t.shape);
    if (byteLength === undefined) return reject([{ pointer: `/inputs/${i}/shape`, code: 'INPUT_SHAPE_MISMATCH', detail: `shape of "${t.name}" is too large` }]);
    total += byteLength;
    return { name: t.name, datatype, shape: t.shape, byteLength };
  });
  if (total > inputMaxBytes) throw new AppError('INPUT_TOO_LARGE', `inputs hold ${total} bytes; the limit is ${inputMaxBytes}`);
  if (signature) checkSignature(heads, signature);
  return heads;
}

/**
 * Checks request tensors' datatypes and the size limit, then decodes JSON data
 * to bytes (raw bytes must be exactly their shape's size). Cheap checks run
 * first so an oversized or misnamed request (against `signature`, when
 * given) is refused before any data is decoded.
 */
export function decodeInputs(inputs: readonly SubmitTensor[], inputMaxBytes: number, signature?: ModelSignature): DecodedInput[] {
  const heads = checkInputHeads(inputs, inputMaxBytes, signature);
  const decodedInputs = heads.map((h, i): DecodedInput => {
    const t = inputs[i]!;
    if ('upload' in t) return { ...h, upload: t.upload };
    const given = 'bytes' in t ? t.bytes.byteLength : 'stored' in t ? t.stored.bytes : undefined;
    if (h.datatype === 'BYTES' && 'bytes' in t) {
      const problem = checkTensorBytes(h.datatype, h.shape, t.bytes);
      if (problem) reject([{ pointer: `/inputs/${i}`, code: 'INPUT_DATA_INVALID', detail: `input "${h.name}": ${problem}` }]);
      return { ...h, byteLength: t.bytes.byteLength, data: t.bytes };
    }
    if (given !== undefined && h.datatype !== 'BYTES' && given !== h.byteLength)
      reject([
        {
          pointer: `/inputs/${i}`,
          code: 'BINARY_SIZE_MISMATCH',
          detail: `input "${h.name}" has ${given} bytes; ${h.datatype} of shape [${h.shape.join(',')}] is ${h.byteLength}`,
        },
      ]);
    if ('bytes' in t) {
      // Right size; a BOOL byte other than 0 or 1 is a value that does not fit (as `2` in JSON is).
      const problem = h.datatype === 'BOOL' ? checkTensorBytes(h.datatype, h.shape, t.bytes) : undefined;
      if (problem) reject([{ pointer: `/inputs/${i}`, code: 'INPUT_DATA_INVALID', detail: `input "${h.name}": ${problem}` }]);
      return { ...h, data: t.bytes };
    }
    // A streamed BYTES part is checked by the worker (its framing and UTF-8), which fails the job with INPUT_DATA_INVALID.
    if ('stored' in t) return { ...h, byteLength: t.stored.bytes, stored: t.stored, sha256: t.sha256 };
    const decoded = decodeTensorData(h.datatype, h.shape, t.data);
    if (!decoded.ok) {
      // A bad element is pointed at itself: /inputs/0/data/5, or /inputs/0/data/1/2 in nested data.
      const pointer = `/inputs/${i}/data${decoded.element ? `/${decoded.element.join('/')}` : ''}`;
      return reject([{ pointer, code: decoded.code, detail: `input "${h.name}": ${decoded.detail}` }]);
    }
    return { ...h, byteLength: decoded.value.byteLength, data: decoded.value };
  });
  // BYTES elements are as long as they are: the limit also holds for what they decode to.
  const decodedTotal = decodedInputs.reduce((n, t) => n + t.byteLength, 0);
  if (decodedTotal > inputMaxBytes) throw new AppError('INPUT_TOO_LARGE', `inputs hold ${decodedTotal} bytes; the limit is ${inputMaxBytes}`);
  return decodedInputs;
}

/** Checks the inputs' names, datatypes and shapes against the model signature. */
function checkSignature(inputs: readonly IntakeHead[], signature: ModelSignature): void {
  const problems = checkInputsAgainstSignature(inputs, signature);
  if (problems.length > 0) reject(problems);
}
