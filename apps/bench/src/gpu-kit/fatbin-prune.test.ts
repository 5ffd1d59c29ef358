import { describe, expect, it } from 'vitest';
import { findElfSection, pruneFatbins } from './fatbin-prune.ts';

/** One fatbin entry: a 64-byte header (kind, header size, payload size, arch at +28) and a payload of `fill` bytes. */
function entry(arch: number, payloadBytes: number, fill: number): Buffer {
  const header = Buffer.alloc(64);
  header.writeUInt16LE(2, 0);
  header.writeUInt32LE(64, 4);
  header.writeBigUInt64LE(BigInt(payloadBytes), 8);
  header.writeUInt32LE(arch, 28);
  return Buffer.concat([header, Buffer.alloc(payloadBytes, fill)]);
}

function fatbin(entries: Buffer[]): Buffer {
  const body = Buffer.concat(entries);
  const header = Buffer.alloc(16);
  header.writeUInt32LE(0xba55ed50, 0);
  header.writeUInt16LE(1, 4);
  header.writeUInt16LE(16, 6);
  header.writeBigUInt64LE(BigInt(body.length), 8);
  return Buffer.concat([header, body]);
}

/** A 64-bit little-endian ELF: header, `sections` one after another, then the names and the section header table. */
function elf(sections: Record<string, Buffer>): { file: Buffer; offsets: Record<string, number> } {
  const names = ['', ...Object.keys(sections), '.shstrtab'];
  const strtab = Buffer.from(`${names.join('\0')}\0`, 'latin1');
  const nameOffset = (n: string) => strtab.indexOf(Buffer.from(`${n}\0`, 'latin1'), n === '' ? 0 : 1);
  const parts: Buffer[] = [Buffer.alloc(64)];
  const offsets: Record<string, number> = {};
  let at = 64;
  for (const [name, bytes] of [...Object.entries(sections), ['.shstrtab', strtab] as const]) {
    offsets[name] = at;
    parts.push(bytes, Buffer.alloc((8 - (bytes.length % 8)) % 8));
    at += bytes.length + ((8 - (bytes.length % 8)) % 8);
  }
  const table = Buffer.alloc(64 * names.length);
  names.forEach((name, i) => {
    if (i === 0) return;
    table.writeUInt32LE(nameOffset(name), i * 64);
    table.writeBigUInt64LE(BigInt(offsets[name]!), i * 64 + 0x18);
    table.writeBigUInt64LE(BigInt(name === '.shstrtab' ? strtab.length : sections[name]!.length), i * 64 + 0x20);
  });
  const file = Buffer.concat([...parts, table]);
  file.writeUInt32LE(0x464c457f, 0);
  file[4] = 2;
  file[5] = 1;
  file.writeBigUInt64LE(BigInt(at), 0x28);
  file.writeUInt16LE(64, 0x3a);
  file.writeUInt16LE(names.length, 0x3c);
  file.writeUInt16LE(names.length - 1, 0x3e);
  return { file, offsets };
}

describe('findElfSection', () => {
  it('finds a section by name, and refuses what is not a 64-bit little-endian ELF', () => {
    const { file, offsets } = elf({ '.text': Buffer.alloc(24, 1), '.nv_fatbin': Buffer.alloc(40) });
    expect(findElfSection(file, '.nv_fatbin')).toEqual({ name: '.nv_fatbin', offset: offsets['.nv_fatbin'], size: 40 });
    expect(findElfSection(file, '.nope')).toBeUndefined();
    expect(() => findElfSection(Buffer.alloc(128), '.text')).toThrow(/not an ELF/);
  });
});

describe('pruneFatbins', () => {
  const first = [entry(75, 40, 0x75), entry(90, 24, 0x90), entry(80, 8, 0x80), entry(90, 16, 0x91)];
  const second = [entry(86, 32, 0x86)];
  // Padding between fatbins is skipped 8 bytes at a time, as CUDA's loader does.
  const section = Buffer.concat([Buffer.alloc(8), fatbin(first), Buffer.alloc(16), fatbin(second)]);

  it("keeps only the architecture's entries in place: packed at each fatbin's front, its size updated, the rest zeroed", () => {
    const { file, offsets } = elf({ '.text': Buffer.alloc(16, 7), '.nv_fatbin': section });
    const before = Buffer.from(file);
    const result = pruneFatbins(file, 90);
    expect(result).toEqual({ kept: 2, dropped: 2, untouched: 1, architectures: [75, 80, 86, 90] });
    expect(file.length).toBe(before.length);
    const start = offsets['.nv_fatbin']! + 8;
    const kept = Buffer.concat([first[1]!, first[3]!]);
    expect(file.readBigUInt64LE(start + 8)).toBe(BigInt(kept.length));
    expect(file.subarray(start + 16, start + 16 + kept.length).equals(kept)).toBe(true);
    const firstEnd = start + fatbin(first).length;
    expect(file.subarray(start + 16 + kept.length, firstEnd).every((b) => b === 0)).toBe(true);
    // Everything outside the first fatbin is byte for byte as it was: the other sections, the fatbin without sm_90.
    expect(file.subarray(firstEnd).equals(before.subarray(firstEnd))).toBe(true);
    expect(file.subarray(0, start + 8).equals(before.subarray(0, start + 8))).toBe(true);
  });

  it('leaves a library with no entry for the architecture as it is, and refuses one without GPU code', () => {
    const { file } = elf({ '.nv_fatbin': section });
    const before = Buffer.from(file);
    expect(pruneFatbins(file, 120)).toMatchObject({ kept: 0, untouched: 2 });
    expect(file.equals(before)).toBe(true);
    expect(() => pruneFatbins(elf({ '.text': Buffer.alloc(8) }).file, 90)).toThrow(/no \.nv_fatbin section/);
  });

  it('refuses a fatbin whose size runs past its section', () => {
    const broken = fatbin(first);
    broken.writeBigUInt64LE(10_000n, 8);
    expect(() => pruneFatbins(elf({ '.nv_fatbin': broken }).file, 90)).toThrow(/runs past its section/);
  });
});
