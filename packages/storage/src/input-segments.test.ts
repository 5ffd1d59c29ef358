import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { StoredTensor } from '@inferq/contracts';
import { createSegmentReader, writeSegment, type SegmentTensor } from './input-segments.ts';
import { inputSegmentKey } from './keys.ts';

const head = { name: 'x', datatype: 'UINT8' as const, shape: [1] };
const bytes = (n: number) => new Uint8Array(randomBytes(n));
const inline = (data: Uint8Array): StoredTensor => ({ ...head, shape: [data.byteLength], bytes: data.byteLength, data });
/** UUIDv7-like ids in time order. */
const ids = ['01a25000-0000-7000-8000-000000000001', '01a25000-0000-7000-8000-000000000002', '01a25000-0000-7000-8000-000000000003'];
/** The jobs of a group: each list of inputs with an id of its own. */
const group = (...inputs: StoredTensor[][]) => inputs.map((tensors, i) => ({ id: ids[i]!, inputs: tensors }));

/** Bytes in memory, and every ranged GET asked of them. */
function memoryStorage() {
  const objects = new Map<string, Uint8Array>();
  const gets: Array<{ key: string; offset: number; length: number }> = [];
  return {
    objects,
    gets,
    async putObject(key: string, body: Uint8Array | NodeJS.ReadableStream) {
      objects.set(key, new Uint8Array(body as Uint8Array));
    },
    async getObjectRange(key: string, offset: number, length: number) {
      gets.push({ key, offset, length });
      const o = objects.get(key);
      if (!o) throw Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' });
      return o.slice(offset, offset + length);
    },
  };
}

describe('writeSegment and createSegmentReader', () => {
  it("puts a group's inline bytes back to back in one object named by its first and last job, each tensor naming it and its offset", async () => {
    const storage = memoryStorage();
    const [a, b, c] = [bytes(5), bytes(0), bytes(7)];
    const large: StoredTensor = { ...head, bytes: 100, key: 'jobs/x/inputs/0.bin' };
    const rows = await writeSegment(storage, group([inline(a)], [large], [inline(b), inline(c)]).reverse());
    rows.reverse();
    expect(storage.objects.size).toBe(1);
    const [key, object] = [...storage.objects][0]!;
    const name = `${ids[0]!.replaceAll('-', '')}.${ids[2]!.replaceAll('-', '')}`;
    // Filed under the day of the group's first job (the UUIDv7's time).
    expect(key).toBe(`jobs/2026-12-07/segments/${name}.bin`);
    expect(object).toEqual(new Uint8Array([...b, ...c, ...a]));
    expect(rows).toEqual([
      [{ ...head, shape: [5], bytes: 5, segment: name, offset: 7 }],
      [large],
      [
        { ...head, shape: [0], bytes: 0, segment: name, offset: 0 },
        { ...head, shape: [7], bytes: 7, segment: name, offset: 0 },
      ],
    ]);
  });

  it('writes nothing for a group without inline bytes', async () => {
    const storage = memoryStorage();
    const large: StoredTensor = { ...head, bytes: 100, key: 'k' };
    expect(await writeSegment(storage, group([large]))).toEqual([[large]]);
    expect(storage.objects.size).toBe(0);
  });

  it('reads the ranges asked for in one turn with one GET per run of neighbouring ranges of a segment', async () => {
    const storage = memoryStorage();
    const data = Array.from({ length: 4 }, () => bytes(1000));
    const [near] = await writeSegment(storage, group(data.map(inline)));
    const [, far] = await writeSegment(storage, group([], [inline(bytes(10)), inline(new Uint8Array(200_000)), inline(bytes(10))]));
    const read = createSegmentReader(storage);
    const got = await Promise.all([...near!, far![0]!, far![2]!].map((t) => read(t as SegmentTensor)));
    expect(got.slice(0, 4)).toEqual(data);
    expect(storage.gets).toHaveLength(3);
    const nearKey = inputSegmentKey(near![0]!.segment!);
    expect(storage.gets.filter((g) => g.key === nearKey)).toEqual([{ key: nearKey, offset: 0, length: 4000 }]);
  });

  it('answers undefined for a range past the object’s end, and fails the reads of a missing object', async () => {
    const storage = memoryStorage();
    const [[t]] = (await writeSegment(storage, group([inline(bytes(8))]))) as [[SegmentTensor]];
    const read = createSegmentReader(storage);
    expect(await read({ ...t, bytes: 9 })).toBeUndefined();
    await expect(read({ ...t, segment: `${'0'.repeat(32)}.${'0'.repeat(32)}` })).rejects.toThrow('NoSuchKey');
  });
});
