import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar } from '@inferq/test-utils';
import {
  CARRIED_INPUTS_TTL_MS,
  carriedInputBytes,
  carriesInputs,
  createCarriedInputs,
  createRedisConnection,
  enqueueRequestFor,
  unpackCarried,
  type RedisClient,
} from '../src/index.ts';

// A queued job's small inputs, carried beside its queue entry: the header in
// the entry, the bytes in a key of their own in the queue's slot (one MGET a
// batch on a Cluster too). Runs on every topology.

const head = { datatype: 'FP32' as const, shape: [1, 3] };
const inline = (name: string, fill: number) => ({ ...head, name, bytes: 12, data: new Uint8Array(12).fill(fill) });
const stored = { ...head, name: 's', bytes: 12, key: 'jobs/a/inputs/0' };
const job = (id: string) => ({ id, modelName: 'carry', modelVersion: 1, priority: 'normal' as const, ownerKeyId: 'k', deadlineAt: null });

let redis: RedisClient;
const prefix = `test-carry-${randomUUID()}`;
beforeAll(async () => {
  redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
  await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(() => redis?.quit());

describe('whether a job carries its inputs', () => {
  it('counts their bytes and a key, and nothing when one input lives in object storage', () => {
    expect(carriedInputBytes([inline('a', 1), inline('b', 2)])).toBe(24 + 128);
    expect(carriedInputBytes([inline('a', 1), stored])).toBeUndefined();
  });

  it("carries them while the model's backlog, each job carrying as much, stays within the budget", () => {
    const each = carriedInputBytes([inline('a', 1)])!;
    expect(carriesInputs([inline('a', 1)], 0, each)).toBe(true);
    expect(carriesInputs([inline('a', 1)], 9, 10 * each)).toBe(true);
    expect(carriesInputs([inline('a', 1)], 10, 10 * each)).toBe(false);
    expect(carriesInputs([inline('a', 1)], undefined, 1 << 30)).toBe(false);
    expect(carriesInputs([inline('a', 1)], 0, 0)).toBe(false);
    expect(carriesInputs([stored], 0, 1 << 30)).toBe(false);
  });
});

describe('carried inputs in Redis', () => {
  it('travel as headers in the entry and bytes beside it, taken back in one call, each input a view at its offset', async () => {
    // A view into a larger buffer is packed from its own offset.
    const backing = new Uint8Array(40).fill(9);
    backing.set(new Uint8Array(12).fill(5), 8);
    const a = { ...head, name: 'a', bytes: 12, data: new Uint8Array(backing.buffer, 8, 12) };
    const b = inline('b', 7);
    const id = randomUUID();
    const entry = enqueueRequestFor(job(id), [a, b], { carry: [a, b] });
    expect(entry.payload.inputs).toEqual([
      { ...head, name: 'a', bytes: 12, at: 0 },
      { ...head, name: 'b', bytes: 12, at: 12 },
    ]);
    expect(enqueueRequestFor(job(id), [a, b]).payload.inputs).toBeUndefined();
    const carried = createCarriedInputs(redis, prefix);
    await carried.write('carry', [{ jobId: id, bytes: entry.carriedBytes! }]);
    const [bytes, missing] = await carried.take('carry', [id, randomUUID()]);
    expect(missing).toBeNull();
    const inputs = unpackCarried(entry.payload.inputs!, bytes!)!;
    expect(inputs.map((t) => [...t.data!])).toEqual([Array(12).fill(5), Array(12).fill(7)]);
    // Taken once: the bytes are gone (a job that runs again reads its row's).
    expect(await carried.take('carry', [id])).toEqual([null]);
    await carried.write('carry', [{ jobId: id, bytes: entry.carriedBytes! }]);
    const ttl = await redis.pttl(`${prefix}:{infer.carry}:${id}:inputs`);
    expect(ttl).toBeGreaterThan(CARRIED_INPUTS_TTL_MS - 60_000);
    await carried.drop('carry', [id]);
    expect(await carried.take('carry', [id])).toEqual([null]);
  });

  it('are not used when their bytes do not match their headers', () => {
    const headers = [{ ...head, name: 'a', bytes: 12, at: 0 }];
    expect(unpackCarried(headers, Buffer.alloc(11))).toBeUndefined();
    expect(unpackCarried(headers, null)).toBeUndefined();
    expect(unpackCarried([{ ...head, name: 'a', bytes: 12 }], Buffer.alloc(12))).toBeUndefined();
  });
});
