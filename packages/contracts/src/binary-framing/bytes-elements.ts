import { framingFailure, type FramingFailure, type FramingResult } from './framing-result.ts';

// BYTES tensors in the binary extension: each element is a 4-byte little-endian
// unsigned length, then that many bytes, elements back to back in row-major order.

/** The length in front of each BYTES element: the bytes an empty element takes. */
export const LENGTH_PREFIX_BYTES = 4;
const utf8 = new TextEncoder();

/** Serialises BYTES elements (strings are written as UTF-8) into the extension's layout. */
export function encodeBytesElements(elements: readonly (Uint8Array | string)[]): Uint8Array {
  const parts = elements.map((e) => (typeof e === 'string' ? utf8.encode(e) : e));
  const out = new Uint8Array(parts.reduce((n, p) => n + LENGTH_PREFIX_BYTES + p.byteLength, 0));
  const view = new DataView(out.buffer);
  let offset = 0;
  for (const p of parts) {
    view.setUint32(offset, p.byteLength, true);
    out.set(p, offset + LENGTH_PREFIX_BYTES);
    offset += LENGTH_PREFIX_BYTES + p.byteLength;
  }
  return out;
}

/**
 * Walks exactly `count` BYTES elements of a tensor's slice, calling `onElement`
 * with each one's start and end. Fails when a length runs past the slice, when
 * the slice ends early or when bytes are left over after the last element.
 */
function walkBytesElements(slice: Uint8Array, count: number, pointer: string, onElement?: (start: number, end: number) => void): FramingFailure | undefined {
  const view = new DataView(slice.buffer, slice.byteOffset, slice.byteLength);
  let offset = 0;
  for (let i = 0; i < count; i++) {
    // count Infinity: as many elements as the slice holds.
    if (count === Infinity && offset === slice.byteLength) break;
    if (offset + LENGTH_PREFIX_BYTES > slice.byteLength)
      return framingFailure('BINARY_SIZE_MISMATCH', pointer, `BYTES element ${i} has no 4-byte length: the ${slice.byteLength} bytes end at ${offset}`);
    const length = view.getUint32(offset, true);
    offset += LENGTH_PREFIX_BYTES;
    if (length > slice.byteLength - offset)
      return framingFailure(
        'BINARY_SIZE_MISMATCH',
        pointer,
        `BYTES element ${i} claims ${length} bytes at offset ${offset}; only ${slice.byteLength - offset} are left`,
      );
    onElement?.(offset, offset + length);
    offset += length;
  }
  if (offset !== slice.byteLength)
    return framingFailure('BINARY_SIZE_MISMATCH', pointer, `${slice.byteLength - offset} bytes are left after the ${count} BYTES elements the shape holds`);
  return undefined;
}

/** Checks that a slice holds exactly `count` BYTES elements, without making a view of each. */
export const checkBytesElements = (slice: Uint8Array, count: number, pointer = ''): FramingFailure | undefined => walkBytesElements(slice, count, pointer);

/** Reads exactly `count` BYTES elements (Infinity: all it holds) from a tensor's slice: views into it, not copies. */
export function decodeBytesElements(slice: Uint8Array, count: number, pointer = ''): FramingResult<Uint8Array[]> {
  const elements: Uint8Array[] = [];
  const bad = walkBytesElements(slice, count, pointer, (start, end) => elements.push(slice.subarray(start, end)));
  return bad ?? { ok: true, value: elements };
}
