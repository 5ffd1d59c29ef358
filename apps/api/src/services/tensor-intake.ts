import {
  byteLengthOf,
  checkInputsAgainstSignature,
  decodeTensorData,
  isDataType,
  type InputTensor,
  type ModelSignature,
  type RawTensor,
} from '@inferq/contracts';
import { AppError, type ProblemItem } from '@inferq/core';

const reject = (items: ProblemItem[]): never => {
  const first = items[0]!;
  throw new AppError(first.code as ConstructorParameters<typeof AppError>[0], first.detail, { errors: items });
};

/** A decoded request tensor; `b64` is the request's own base64 text when it came as one, so it is not encoded again. */
export type DecodedInput = RawTensor & { b64?: string };

/**
 * Checks request tensors against the model signature and the size limit, then
 * decodes them to bytes. Cheap checks run first so an oversized or misnamed
 * request is refused before any data is decoded.
 */
export function decodeInputs(inputs: InputTensor[], signature: ModelSignature, inputMaxBytes: number): DecodedInput[] {
  const unsupported = inputs.flatMap((t, i) =>
    isDataType(t.datatype)
      ? []
      : [{ pointer: `/inputs/${i}/datatype`, code: 'DATATYPE_UNSUPPORTED', detail: `datatype "${String(t.datatype).slice(0, 20)}" is not supported` }],
  );
  if (unsupported.length > 0) reject(unsupported);
  const headers = inputs.map((t) => ({ name: t.name, datatype: t.datatype as RawTensor['datatype'], shape: t.shape }));
  const problems = checkInputsAgainstSignature(headers, signature);
  if (problems.length > 0) reject(problems);
  let total = 0;
  for (const h of headers) {
    const bytes = byteLengthOf(h.datatype, h.shape);
    if (bytes === undefined) reject([{ pointer: '/inputs', code: 'INPUT_SHAPE_MISMATCH', detail: `shape of "${h.name}" is too large` }]);
    total += bytes!;
  }
  if (total > inputMaxBytes) throw new AppError('INPUT_TOO_LARGE', `inputs hold ${total} bytes; the limit is ${inputMaxBytes}`);
  return headers.map((h, i) => {
    const data = inputs[i]!.data;
    const decoded = decodeTensorData(h.datatype, h.shape, data);
    if (!decoded.ok) {
      // A bad element is pointed at itself: /inputs/0/data/5, or /inputs/0/data/1/2 in nested data.
      const pointer = `/inputs/${i}/data${decoded.element ? `/${decoded.element.join('/')}` : ''}`;
      return reject([{ pointer, code: decoded.code, detail: `input "${h.name}": ${decoded.detail}` }]);
    }
    return typeof data === 'string' ? { ...h, data: decoded.value, b64: data } : { ...h, data: decoded.value };
  });
}
