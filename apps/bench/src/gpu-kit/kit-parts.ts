/**
 * The kit's archive in parts, each small enough for one device call: a call carries the repo's working tree plus
 * the paths it names, 64 MiB in all. receive-kit.sh, on the GPU machine, keeps each part outside the tree (a warm
 * machine keeps such files between calls) and unpacks and runs the kit once every part has come.
 */
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { pipeline } from 'node:stream/promises';

export const DEVICE_CALL_BYTES = 64 * 2 ** 20;
/** Left free in each call for the checksum list and for files the tree gains before the calls are made. */
const MARGIN_BYTES = 3 * 2 ** 20;
const MIN_PART_BYTES = 2 ** 20;
export const PARTS_LIST = 'parts.sha256';

/** The largest part a call can carry beside a working tree of `treeBytes`; throws when the tree leaves no room. */
export function partBytesFor(treeBytes: number, callBytes = DEVICE_CALL_BYTES): number {
  const room = callBytes - treeBytes - MARGIN_BYTES;
  if (room < MIN_PART_BYTES) throw new Error(`the working tree (${(treeBytes / 2 ** 20).toFixed(1)} MiB) leaves no room in a device call for a part`);
  return room;
}

/** Byte ranges [start, end) of `totalBytes` cut into parts of at most `partBytes`, as even as they can be. */
export function planParts(totalBytes: number, partBytes: number): Array<[number, number]> {
  if (partBytes <= 0) throw new Error('a part must hold at least one byte');
  const count = Math.max(1, Math.ceil(totalBytes / partBytes));
  const even = Math.ceil(totalBytes / count);
  return Array.from({ length: count }, (_, i) => [Math.min(totalBytes, i * even), Math.min(totalBytes, (i + 1) * even)] as [number, number]);
}

/** `NAME.part1`…`NAME.partN`: the order `cat` needs, and what the checksum list names. */
export const partName = (archive: string, index: number, count: number): string =>
  `${basename(archive)}.part${String(index + 1).padStart(String(count).length, '0')}`;

/** One line of a sha256sum list. */
const checksumLine = (sha256: string, name: string): string => `${sha256}  ${name}`;

export interface WrittenParts {
  dir: string;
  parts: Array<{ name: string; bytes: number; sha256: string }>;
  archiveSha256: string;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(path), hash);
  return hash.digest('hex');
}

/** Cuts `archive` into `dir` (emptied first) and writes the checksum list: every part, then the whole archive. */
export async function writeParts(archive: string, dir: string, partBytes: number): Promise<WrittenParts> {
  for (const old of await readdir(dir).catch(() => [])) await rm(join(dir, old), { force: true });
  const ranges = planParts((await stat(archive)).size, partBytes);
  const parts: WrittenParts['parts'] = [];
  for (const [i, [start, end]] of ranges.entries()) {
    const name = partName(archive, i, ranges.length);
    // An empty range (an empty archive) still makes its part, as an empty file.
    if (end > start) await pipeline(createReadStream(archive, { start, end: end - 1 }), createWriteStream(join(dir, name)));
    else await writeFile(join(dir, name), '');
    parts.push({ name, bytes: end - start, sha256: await sha256Of(join(dir, name)) });
  }
  const archiveSha256 = await sha256Of(archive);
  const lines = [...parts.map((p) => checksumLine(p.sha256, p.name)), checksumLine(archiveSha256, basename(archive))];
  await writeFile(join(dir, PARTS_LIST), `${lines.join('\n')}\n`);
  return { dir, parts, archiveSha256 };
}
