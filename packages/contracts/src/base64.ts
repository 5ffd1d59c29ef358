// Base64 without node: imports so the codec also runs in the browser. Node's
// Buffer is used when present because it is an order of magnitude faster.
type NodeBytes = Uint8Array & { toString(encoding: string): string };
type BufferLike = {
  from(buffer: ArrayBufferLike, byteOffset: number, length: number): NodeBytes;
  from(text: string, encoding: string): NodeBytes;
};
const NodeBuffer = (globalThis as { Buffer?: BufferLike }).Buffer;

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

export function encodeBase64(bytes: Uint8Array): string {
  if (NodeBuffer) return NodeBuffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64');
  let s = '';
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** Decodes strict base64; returns undefined when the text is not base64. */
export function decodeBase64(text: string): Uint8Array | undefined {
  if (text.length % 4 !== 0) return undefined;
  if (NodeBuffer) {
    // Node's decoder skips characters outside the alphabet, stops at padding and
    // accepts base64url; ruling out '-' and '_' and checking the decoded length
    // is as strict as the pattern, without a regular expression over megabytes.
    if (text.includes('-') || text.includes('_')) return undefined;
    const b = NodeBuffer.from(text, 'base64');
    return b.byteLength === base64DecodedLength(text) ? new Uint8Array(b.buffer, b.byteOffset, b.byteLength) : undefined;
  }
  if (!BASE64_RE.test(text)) return undefined;
  const bin = atob(text);
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

/** Decoded length of a base64 string, without decoding it. */
export const base64DecodedLength = (text: string): number => Math.floor((text.length * 3) / 4) - (text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0);
