/**
 * Keeps one GPU architecture's code in a CUDA shared library (the kit's CUDA execution provider), so it fits the
 * device calls that carry it: every fatbin in the ELF's `.nv_fatbin` section keeps only its entries for `sm_<arch>`,
 * packed at its front with its size field updated and the rest zero-filled. Offsets and the file's size do not change,
 * so nothing that points into the section moves; a fatbin with no entry for the architecture is left as it is.
 *
 * The layouts (little-endian), as CUDA's fatbinary writes them:
 *   fatbin header (16 bytes): u32 magic 0xBA55ED50, u16 version, u16 headerSize, u64 fatSize (bytes after the header)
 *   entry header:             u16 kind, u16 (unused here), u32 entryHeaderSize, u64 payloadSize, …, u32 arch at +28
 */

const FATBIN_MAGIC = 0xba55ed50;
const FATBIN_HEADER_BYTES = 16;
const ENTRY_ARCH_OFFSET = 28;
const ELF_MAGIC = 0x464c457f;

export interface ElfSection {
  name: string;
  offset: number;
  size: number;
}

export interface PruneResult {
  /** Entries kept (the architecture's), entries zeroed, and fatbins that had no entry for it (left whole). */
  kept: number;
  dropped: number;
  untouched: number;
  /** Every architecture found in the section, ascending (e.g. [75, 80, 86, 89, 90, 120]). */
  architectures: number[];
}

/** The named section of a 64-bit little-endian ELF file, or undefined when it has none; throws for anything else. */
export function findElfSection(elf: Buffer, name: string): ElfSection | undefined {
  if (elf.length < 64 || elf.readUInt32LE(0) !== ELF_MAGIC) throw new Error('not an ELF file');
  if (elf[4] !== 2 || elf[5] !== 1) throw new Error('only 64-bit little-endian ELF files are read');
  const sectionTable = Number(elf.readBigUInt64LE(0x28));
  const entryBytes = elf.readUInt16LE(0x3a);
  const count = elf.readUInt16LE(0x3c);
  const namesIndex = elf.readUInt16LE(0x3e);
  const header = (i: number) => {
    const at = sectionTable + i * entryBytes;
    return { nameOffset: elf.readUInt32LE(at), offset: Number(elf.readBigUInt64LE(at + 0x18)), size: Number(elf.readBigUInt64LE(at + 0x20)) };
  };
  const names = header(namesIndex);
  for (let i = 0; i < count; i++) {
    const section = header(i);
    const start = names.offset + section.nameOffset;
    const sectionName = elf.toString('latin1', start, elf.indexOf(0, start));
    if (sectionName === name) return { name, offset: section.offset, size: section.size };
  }
  return undefined;
}

/**
 * Prunes `elf` in place to `sm_<arch>` (see the header). The section is walked as CUDA's loader lays it out:
 * fatbins one after another, 8-byte aligned, anything else skipped 8 bytes at a time.
 */
export function pruneFatbins(elf: Buffer, arch: number): PruneResult {
  const section = findElfSection(elf, '.nv_fatbin');
  if (!section) throw new Error('the library has no .nv_fatbin section: it carries no GPU code');
  const end = section.offset + section.size;
  if (end > elf.length) throw new Error('the .nv_fatbin section runs past the end of the file');
  const result: PruneResult = { kept: 0, dropped: 0, untouched: 0, architectures: [] };
  const seen = new Set<number>();
  let pos = section.offset;
  while (pos + FATBIN_HEADER_BYTES <= end) {
    if (elf.readUInt32LE(pos) !== FATBIN_MAGIC) {
      pos += 8;
      continue;
    }
    const headerBytes = elf.readUInt16LE(pos + 6);
    const body = pos + headerBytes;
    const fatEnd = body + Number(elf.readBigUInt64LE(pos + 8));
    if (fatEnd > end) throw new Error(`the fatbin at offset ${pos} runs past its section`);
    const keep: Buffer[] = [];
    let entries = 0;
    for (let e = body; e < fatEnd; entries++) {
      const entryEnd = e + elf.readUInt32LE(e + 4) + Number(elf.readBigUInt64LE(e + 8));
      if (entryEnd > fatEnd || entryEnd <= e) throw new Error(`the fatbin entry at offset ${e} runs past its fatbin`);
      const entryArch = elf.readUInt32LE(e + ENTRY_ARCH_OFFSET);
      seen.add(entryArch);
      // Copied out before the kept entries are packed over the fatbin's front.
      if (entryArch === arch) keep.push(Buffer.from(elf.subarray(e, entryEnd)));
      e = entryEnd;
    }
    if (keep.length > 0) {
      const packed = Buffer.concat(keep);
      elf.writeBigUInt64LE(BigInt(packed.length), pos + 8);
      packed.copy(elf, body);
      elf.fill(0, body + packed.length, fatEnd);
      result.kept += keep.length;
      result.dropped += entries - keep.length;
    } else result.untouched++;
    pos = fatEnd;
  }
  result.architectures = [...seen].sort((a, b) => a - b);
  return result;
}
