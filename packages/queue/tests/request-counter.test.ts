import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar } from '@inferq/test-utils';
import { createRedisConnection, createRequestCounter, type RedisClient, type RequestCounter } from '../src/index.ts';

// Per-key request counts shared by API processes: counted in each process far
// from the limit, decided on Redis's count from the limit on. Two counters on
// one Redis stand for two API replicas; syncs are driven by hand.

let redis: RedisClient;
const counters: RequestCounter[] = [];
const prefix = `test-rate-${randomUUID()}:`;
const HOUR = 3_600_000;

const counter = () => {
  const c = createRequestCounter(redis, { prefix, syncMs: HOUR });
  counters.push(c);
  return c;
};
const shared = async (key: string) => Number(await redis.get(prefix + key));
const hits = async (c: RequestCounter, key: string, n: number, max: number) => {
  const out = [];
  for (let i = 0; i < n; i++) out.push((await c.hit(key, HOUR, max)).current);
  return out;
};

beforeAll(async () => {
  redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
  await new Promise((resolve) => redis.once('ready', resolve));
});
afterAll(async () => {
  await Promise.all(counters.map((c) => c.close()));
  redis.disconnect();
});

describe('a request counter shared through Redis', () => {
  it('counts in the process below the limit and asks Redis from the limit on, exact with one process', async () => {
    const c = counter();
    const key = randomUUID();
    expect(await hits(c, key, 4, 5)).toEqual([1, 2, 3, 4]);
    expect(await redis.exists(prefix + key)).toBe(0); // nothing sent yet
    expect(await hits(c, key, 2, 5)).toEqual([5, 6]); // the 5th and 6th are decided on Redis's count
    expect(await shared(key)).toBe(6);
    // Past the limit the window's count only grows: refused without asking, added at the next sync.
    expect(await hits(c, key, 2, 5)).toEqual([7, 8]);
    expect(await shared(key)).toBe(6);
    await c.flush();
    expect(await shared(key)).toBe(8);
  });

  it("starts the window with the key's first request and expires the key with it", async () => {
    const c = counter();
    const key = randomUUID();
    await c.hit(key, 2_000, 100);
    await c.flush();
    const ttl = await redis.pttl(prefix + key);
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(2_000);
    expect(c.peek(key)).toMatchObject({ current: 1 });
    // A key left without an expiry (as a crash between two commands could leave it) gets one at the next sync.
    const stuck = randomUUID();
    await redis.set(prefix + stuck, 3);
    expect((await c.hit(stuck, 2_000, 1)).current).toBe(4); // max 1: decided on Redis at once
    expect(await redis.pttl(prefix + stuck)).toBeGreaterThan(0);
  });

  it('two processes: each learns the other’s requests at its next sync, and both refuse once the shared count is past the limit', async () => {
    const a = counter();
    const b = counter();
    const key = randomUUID();
    expect(await hits(a, key, 4, 10)).toEqual([1, 2, 3, 4]);
    expect(await hits(b, key, 4, 10)).toEqual([1, 2, 3, 4]);
    await a.flush();
    await b.flush(); // b now knows 8
    expect(await hits(b, key, 3, 10)).toEqual([9, 10, 11]); // from the 9th on b asks Redis each time
    // a's view is one sync old: it admits one more within its sync interval (the documented overshoot) ...
    expect(await hits(a, key, 1, 10)).toEqual([5]);
    await a.flush();
    // ... and after it, refuses too.
    expect((await a.hit(key, HOUR, 10)).current).toBeGreaterThan(10);
    expect(await shared(key)).toBe(12);
  });

  it('a request near the limit fails with Redis unreachable (the plugin then lets it through); far from it, none is asked', async () => {
    const down = createRedisConnection('redis://127.0.0.1:1', 'producer');
    down.on('error', () => {});
    const c = createRequestCounter(down, { prefix, syncMs: HOUR });
    const key = randomUUID();
    expect(await hits(c, key, 2, 3)).toEqual([1, 2]);
    await expect(c.hit(key, HOUR, 3)).rejects.toThrow();
    await c.close();
    down.disconnect();
  });
});
