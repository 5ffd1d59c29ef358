import { describe, expect, it } from 'vitest';
import { base64DecodedLength, decodeBase64, encodeBase64 } from './base64.ts';

describe('decodeBase64', () => {
  it('round-trips every length of bytes', () => {
    for (let n = 0; n < 40; n++) {
      const bytes = Uint8Array.from({ length: n }, (_, i) => (i * 37 + n) & 0xff);
      const text = encodeBase64(bytes);
      expect(base64DecodedLength(text)).toBe(n);
      expect(decodeBase64(text)).toEqual(bytes);
    }
  });

  it.each([
    ['whitespace', 'QUJD REVG'],
    ['a newline', 'QUJD\nREVGR0hJ'],
    ['base64url characters', 'ab-_'],
    ['padding in the middle', 'QQ==QUJD'],
    ['three padding characters', 'Q==='],
    ['only padding', '===='],
    ['a length not a multiple of 4', 'QUJ'],
    ['a character outside the alphabet', 'QU*D'],
    ['non-ASCII text', 'QUJé'],
  ])('rejects %s', (_, text) => {
    expect(decodeBase64(text)).toBeUndefined();
  });
});
