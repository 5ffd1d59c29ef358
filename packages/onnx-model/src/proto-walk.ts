// A field-by-field walk over protobuf bytes with protobufjs's low-level
// Reader. The signature reader uses it instead of the generated decoders so
// it can step over node and initializer payloads (often hundreds of MB)
// without copying them, and so its nesting depth is fixed by the code, not by
// the bytes.
import protobuf from 'protobufjs/minimal.js';
import { OnnxModelError } from './onnx-model-error.ts';

export type ProtoReader = protobuf.Reader;

const WireType = { Varint: 0, Fixed64: 1, LengthDelimited: 2, StartGroup: 3, Fixed32: 5 } as const;

/** Called for each field; returns false when it did not read the value, which is then skipped. */
export type FieldVisitor = (field: number, wireType: number) => boolean;

export const createProtoReader = (bytes: Uint8Array): ProtoReader => protobuf.Reader.create(bytes);

/** Visits every field of the message that runs from the reader's position to its current limit. */
export function readFields(reader: ProtoReader, visit: FieldVisitor): void {
  while (reader.pos < reader.len) {
    const tag = reader.uint32();
    const field = tag >>> 3;
    const wireType = tag & 7;
    if (field === 0) throw malformed(reader, 'field number 0');
    if (!visit(field, wireType)) reader.skipType(wireType, 0, field);
  }
}

/**
 * Reads a length-delimited field as a nested message: the reader's limit is
 * narrowed to the field, so nothing inside can read past it, then restored.
 */
export function readNested(reader: ProtoReader, wireType: number, what: string, visit: FieldVisitor): void {
  expectWireType(reader, wireType, WireType.LengthDelimited, what);
  const length = reader.uint32();
  const end = reader.pos + length;
  if (end > reader.len) throw malformed(reader, `${what} declares ${length} bytes but only ${reader.len - reader.pos} remain`);
  const outerLen = reader.len;
  reader.len = end;
  readFields(reader, visit);
  reader.len = outerLen;
}

export function readString(reader: ProtoReader, wireType: number, what: string): string {
  expectWireType(reader, wireType, WireType.LengthDelimited, what);
  return reader.string();
}

/** Reads an int64 varint; values beyond 2^53 cannot be a real count or dim. */
export function readSafeInt64(reader: ProtoReader, wireType: number, what: string): number {
  expectWireType(reader, wireType, WireType.Varint, what);
  const raw: unknown = reader.int64();
  const value = typeof raw === 'number' ? raw : (raw as { toNumber(): number }).toNumber();
  if (!Number.isSafeInteger(value)) throw malformed(reader, `${what} is out of range`);
  return value;
}

export function readInt32(reader: ProtoReader, wireType: number, what: string): number {
  expectWireType(reader, wireType, WireType.Varint, what);
  return reader.int32();
}

function expectWireType(reader: ProtoReader, actual: number, expected: number, what: string): void {
  if (actual !== expected) throw malformed(reader, `${what} has wire type ${actual}, expected ${expected}`);
}

function malformed(reader: ProtoReader, reason: string): OnnxModelError {
  return new OnnxModelError('MODEL_INVALID', `the file is not a valid ONNX model: ${reason} (at byte ${reader.pos})`);
}
