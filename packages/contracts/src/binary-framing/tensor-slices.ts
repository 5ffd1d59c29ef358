import { DataTypes, isDataType, isFixedSizeDataType } from '../datatypes.ts';
import { elementCount } from '../tensor-codec.ts';
import { checkBytesElements } from './bytes-elements.ts';
import { framingFailure, type FramingResult } from './framing-result.ts';

/** The variable-length datatype of the protocol; every other one has a fixed element size. */
export const BYTES_DATATYPE = 'BYTES';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A tensor's `parameters.binary_data_size` as given (undefined when it is not sent as binary). */
export function binaryDataSizeOf(tensor: unknown): unknown {
  if (!isRecord(tensor) || !isRecord(tensor.parameters)) return undefined;
  return tensor.parameters.binary_data_size;
}

/** Where one binary tensor's bytes sit in the binary section; `count` is its element count (BYTES slices are walked for it). */
export interface BinarySlicePlan {
  index: number;
  offset: number;
  byteLength: number;
  datatype: string;
  count: number;
}
/** The binary tensors in order and the bytes they add up to: the binary section must be exactly `totalBytes`. */
export interface BinaryPlan {
  slices: BinarySlicePlan[];
  totalBytes: number;
}

/**
 * Lays out the binary section from the JSON header alone, before a byte of it
 * is read (a streaming reader can compare `totalBytes` with Content-Length minus
 * the header length): each `binary_data_size` a non-negative integer, not beside
 * `data`, of a datatype with a known size whose shape gives exactly that size
 * (BYTES: any size, checked when its bytes are read).
 */
export function planBinaryTensors(tensors: unknown, member: 'inputs' | 'outputs'): FramingResult<BinaryPlan> {
  const list: unknown[] = Array.isArray(tensors) ? tensors : [];
  const slices: BinarySlicePlan[] = [];
  let offset = 0;
  for (let index = 0; index < list.length; index++) {
    const tensor = list[index];
    const size = binaryDataSizeOf(tensor);
    if (size === undefined || !isRecord(tensor)) continue;
    const at = `/body/${member}/${index}`;
    const sizeAt = `${at}/parameters/binary_data_size`;
    if (typeof size !== 'number' || !Number.isSafeInteger(size) || size < 0)
      return framingFailure('BINARY_SIZE_INVALID', sizeAt, 'binary_data_size must be a non-negative integer');
    if (Object.hasOwn(tensor, 'data'))
      return framingFailure('BINARY_DATA_CONFLICT', at, `${member.slice(0, -1)} ${index} has both data and binary_data_size: give one`);
    const { datatype, shape } = tensor;
    const count = Array.isArray(shape) ? elementCount(shape as number[]) : undefined;
    if (count === undefined) return framingFailure('INPUT_SHAPE_MISMATCH', `${at}/shape`, 'shape must be a list of non-negative integers with a safe product');
    if (datatype !== BYTES_DATATYPE) {
      if (!isDataType(datatype) || !isFixedSizeDataType(datatype))
        return framingFailure(
          'DATATYPE_UNSUPPORTED',
          `${at}/datatype`,
          `datatype ${JSON.stringify(datatype)?.slice(0, 40)} cannot be sent as binary data here`,
        );
      const expected = count * DataTypes[datatype].bytes;
      if (size !== expected)
        return framingFailure(
          'BINARY_SIZE_MISMATCH',
          sizeAt,
          `binary_data_size is ${size}; ${datatype} of shape [${(shape as number[]).join(',')}] is ${expected} bytes`,
        );
    }
    slices.push({ index, offset, byteLength: size, datatype: datatype as string, count });
    offset += size;
    if (!Number.isSafeInteger(offset)) return framingFailure('BINARY_SIZE_INVALID', sizeAt, 'the binary_data_size values add up past 2^53');
  }
  return { ok: true, value: { slices, totalBytes: offset } };
}

/**
 * Cuts the binary section into the tensors (`inputs` of a request, `outputs` of
 * a response) that carry `parameters.binary_data_size`, in their order, after
 * `planBinaryTensors`' checks; BYTES slices must hold exactly their elements.
 * The sizes must add up to the section exactly. Tensors without the parameter
 * keep their JSON `data` (undefined in the result, which is aligned with the tensors).
 */
export function sliceBinaryTensors(tensors: unknown, binary: Uint8Array, member: 'inputs' | 'outputs'): FramingResult<(Uint8Array | undefined)[]> {
  const plan = planBinaryTensors(tensors, member);
  if (!plan.ok) return plan;
  const result: (Uint8Array | undefined)[] = Array.from({ length: Array.isArray(tensors) ? tensors.length : 0 });
  for (const { index, offset, byteLength, datatype, count } of plan.value.slices) {
    const sizeAt = `/body/${member}/${index}/parameters/binary_data_size`;
    if (offset + byteLength > binary.byteLength)
      return framingFailure(
        'BINARY_SIZE_MISMATCH',
        sizeAt,
        `binary_data_size ${byteLength} at offset ${offset} runs past the ${binary.byteLength}-byte binary section` +
          (binary.byteLength === 0 ? ' (is Inference-Header-Content-Length set?)' : ''),
      );
    const slice = binary.subarray(offset, offset + byteLength);
    if (datatype === BYTES_DATATYPE) {
      const bad = checkBytesElements(slice, count, sizeAt);
      if (bad) return bad;
    }
    result[index] = slice;
  }
  if (plan.value.totalBytes !== binary.byteLength)
    return framingFailure(
      'BINARY_SIZE_MISMATCH',
      `/body/${member}`,
      `the binary_data_size values add up to ${plan.value.totalBytes} bytes; the binary section has ${binary.byteLength}`,
    );
  return { ok: true, value: result };
}
