import DataLoader from 'dataloader';
import { inputSegmentName, type StoredTensor } from '@inferq/contracts';
import { inputSegmentKey } from './keys.ts';
import type { Storage } from './s3-client.ts';

// Segments keep the small inputs of submits out of Postgres's WAL. A group of
// submits (the API's group commit) writes the bytes of all its inline inputs
// back to back as ONE object, and each row names that object and its input's
// offset: one PUT for the group instead of ~14 KB of WAL a job (the row, its
// TOAST, and the full-page images of both at a freeze and a purge). The
// object is never rewritten; it is deleted whole when the last row naming it
// lets its inputs go (a drop of inputs or a purge: packages/db's
// job-retention.ts), the orphan sweeper catching any a race left behind. Until
// then a job whose inputs were dropped has its bytes in it, named by nobody.
//
// Reads are coalesced: the reads a batch starts in one turn of the event loop
// are grouped by segment, and neighbouring ranges of one segment are fetched
// by one ranged GET (a batch's jobs mostly came in one group, back to back).

/** Two ranges of a segment closer than this are fetched together (the gap read and thrown away). */
const MERGE_GAP_BYTES = 64 * 1024;

/** A tensor whose bytes are in a segment. */
export type SegmentTensor = StoredTensor & { segment: string; offset: number };
export const inSegment = (t: StoredTensor): t is SegmentTensor => t.segment !== undefined && t.offset !== undefined;

/** A job's id and its inputs, as a group's segment is written from them. */
export interface SegmentJob {
  id: string;
  inputs: readonly StoredTensor[];
}

/**
 * Moves the inline bytes (`data`) of the jobs' inputs into one new segment named by the jobs' first and last ids: each
 * job's inputs come back (in order) with those tensors naming it (`segment`, `offset`) in place of their bytes. Inputs
 * are returned as they are, and nothing is written, when none has inline bytes.
 */
export async function writeSegment(storage: Pick<Storage, 'putObject'>, jobs: readonly SegmentJob[]): Promise<StoredTensor[][]> {
  const ids = jobs.map((j) => j.id).sort();
  const segment = inputSegmentName(ids[0] ?? '', ids.at(-1) ?? '');
  const chunks: Uint8Array[] = [];
  let total = 0;
  const named = jobs.map(({ inputs }) =>
    inputs.map(({ data, ...rest }) => {
      if (!data) return rest;
      chunks.push(data);
      total += data.byteLength;
      return { ...rest, segment, offset: total - data.byteLength };
    }),
  );
  if (chunks.length === 0) return jobs.map((j) => [...j.inputs]);
  await storage.putObject(inputSegmentKey(segment), Buffer.concat(chunks, total));
  return named;
}

const isRangeNotSatisfiable = (err: unknown): boolean =>
  (err as { name?: string }).name === 'InvalidRange' || (err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 416;

type RangeRead = { key: string; offset: number; bytes: number };

/** Sorted ranges of one segment merged into runs: each run is one GET. */
function runsOf(reads: RangeRead[]): Array<{ start: number; end: number; reads: RangeRead[] }> {
  const runs: Array<{ start: number; end: number; reads: RangeRead[] }> = [];
  for (const r of [...reads].sort((a, b) => a.offset - b.offset)) {
    const last = runs.at(-1);
    if (last && r.offset - last.end <= MERGE_GAP_BYTES) {
      last.end = Math.max(last.end, r.offset + r.bytes);
      last.reads.push(r);
    } else runs.push({ start: r.offset, end: r.offset + r.bytes, reads: [r] });
  }
  return runs;
}

/**
 * Reads ranges of segments, those asked for in one turn fetched together. Each answer is a view of the run's buffer,
 * or `undefined` where the object ended before the range did (the caller's wrong size); a failed GET fails its run's reads.
 */
export function createSegmentReader(storage: Pick<Storage, 'getObjectRange'>): (t: SegmentTensor) => Promise<Uint8Array | undefined> {
  const loader = new DataLoader<RangeRead, Uint8Array | undefined, RangeRead>(
    async (reads) => {
      const answers = new Map<RangeRead, Uint8Array | undefined | Error>();
      const byKey = new Map<string, RangeRead[]>();
      for (const r of reads) {
        const ofKey = byKey.get(r.key);
        if (ofKey) ofKey.push(r);
        else byKey.set(r.key, [r]);
      }
      await Promise.all(
        [...byKey].flatMap(([key, ofKey]) =>
          runsOf(ofKey).map(async (run) => {
            try {
              const data = await storage.getObjectRange(key, run.start, run.end - run.start);
              for (const r of run.reads) {
                const at = r.offset - run.start;
                answers.set(r, at + r.bytes <= data.byteLength ? data.subarray(at, at + r.bytes) : undefined);
              }
            } catch (err) {
              // A range that starts past the object's end (416) is a wrong size, as one that ends past it.
              for (const r of run.reads) answers.set(r, isRangeNotSatisfiable(err) ? undefined : (err as Error));
            }
          }),
        ),
      );
      return reads.map((r) => answers.get(r));
    },
    { cache: false },
  );
  return (t) => loader.load({ key: inputSegmentKey(t.segment), offset: t.offset, bytes: t.bytes });
}
