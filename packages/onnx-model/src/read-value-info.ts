// ValueInfoProto → the parts of it a signature needs. Field numbers are those
// of onnx.proto, which never renumbers fields.
import { readFields, readInt32, readNested, readSafeInt64, readString, type ProtoReader } from './proto-walk.ts';

/** What a graph input or output declares. `kind` is the TypeProto `value` oneof. */
export interface ValueInfo {
  name: string;
  kind: 'tensor' | 'sequence' | 'map' | 'optional' | 'sparse tensor' | 'none';
  /** TensorProto.DataType number, 0 when not set. */
  elemType: number;
  /** One entry per dim, -1 when dynamic; undefined when the rank is unknown. */
  dims: number[] | undefined;
}

const OTHER_KINDS: Record<number, ValueInfo['kind']> = { 4: 'sequence', 5: 'map', 8: 'sparse tensor', 9: 'optional' };

/** Reads the ValueInfoProto at the reader's position (a length-delimited field). */
export function readValueInfo(reader: ProtoReader, wireType: number, what: string): ValueInfo {
  const info: ValueInfo = { name: '', kind: 'none', elemType: 0, dims: undefined };
  readNested(reader, wireType, what, (field, wt) => {
    if (field === 1) info.name = readString(reader, wt, `${what} name`);
    else if (field === 2) readTypeProto(reader, wt, what, info);
    else return false;
    return true;
  });
  return info;
}

function readTypeProto(reader: ProtoReader, wireType: number, what: string, info: ValueInfo): void {
  readNested(reader, wireType, `${what} type`, (field, wt) => {
    if (field === 1) {
      // A repeated singular message merges into the previous one (protobuf rules).
      if (info.kind !== 'tensor') Object.assign(info, { kind: 'tensor', elemType: 0, dims: undefined });
      readTensorType(reader, wt, what, info);
      return true;
    }
    const kind = OTHER_KINDS[field];
    if (!kind) return false;
    Object.assign(info, { kind, elemType: 0, dims: undefined });
    return false;
  });
}

function readTensorType(reader: ProtoReader, wireType: number, what: string, info: ValueInfo): void {
  readNested(reader, wireType, `${what} tensor type`, (field, wt) => {
    if (field === 1) info.elemType = readInt32(reader, wt, `${what} element type`);
    else if (field === 2) {
      const dims = (info.dims ??= []);
      readNested(reader, wt, `${what} shape`, (shapeField, swt) => {
        if (shapeField !== 1) return false;
        dims.push(readDimension(reader, swt, what));
        return true;
      });
    } else return false;
    return true;
  });
}

/** A dim is fixed only when it has a dim_value; dim_param or nothing means dynamic. */
function readDimension(reader: ProtoReader, wireType: number, what: string): number {
  let value = -1;
  readNested(reader, wireType, `${what} dim`, (field, wt) => {
    if (field === 1) value = readSafeInt64(reader, wt, `${what} dim value`);
    else if (field === 2) {
      readString(reader, wt, `${what} dim param`);
      value = -1;
    } else return false;
    return true;
  });
  // Some exporters write -1 as a dim_value for "unknown"; onnxruntime reads it as dynamic.
  return value < 0 ? -1 : value;
}
