import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { PRIORITY_LIMIT, Queue, Worker } from 'bullmq';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar } from '@inferq/test-utils';
import {
  CLASS_RANGE,
  classRange,
  createRedisConnection,
  deleteKeysWithPrefix,
  duplicateForBlocking,
  queueKey,
  queueNameFor,
  type RedisClient,
} from '../src/index.ts';
import { readLuaSource } from '../src/lua-script.ts';
// The scripts' callers, which the package keeps inside (its producer runs them).
import { assignFairPriorities, countWaitingPerClass, promoteJobs } from '../src/producer/fair-priority.ts';

// The fair-priority scripts (src/lua/fair-priority-*.lua) read and write
// BullMQ's private keys: the prioritized set and its score layout, the
// priority counter, the marker, the meta hash's pause flag, the job hash's
// priority. Nothing in BullMQ's API promises that layout, so bullmq is pinned
// to the version the scripts name, and this file checks that version and the
// layout itself, through BullMQ's own Queue, Job and Worker on real Redis.

const LAYOUT_CHANGED = "BullMQ's private key layout changed: re-check packages/queue/src/lua/*.lua before upgrading";

const ROOT = new URL('../../../', import.meta.url);
const LUA = new URL('../src/lua/', import.meta.url);
const readJson = (url: URL | string) => JSON.parse(readFileSync(url, 'utf8')) as Record<string, unknown>;
const installed = (readJson(createRequire(import.meta.url).resolve('bullmq/package.json')) as { version: string }).version;
const SHIFT = 2 ** 32;

describe('the BullMQ version', () => {
  it('is pinned exactly, in every package.json and the lockfile, to the one installed', () => {
    const root = readJson(new URL('package.json', ROOT)) as { workspaces: string[] };
    const manifests = [
      'package.json',
      ...root.workspaces.flatMap((pattern) => {
        const parent = pattern.replace(/\/\*$/, '');
        return readdirSync(new URL(`${parent}/`, ROOT), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${parent}/${d.name}/package.json`)
          .filter((p) => {
            try {
              readFileSync(new URL(p, ROOT));
              return true;
            } catch {
              return false;
            }
          });
      }),
    ];
    const pins = manifests.flatMap((path) => {
      const m = readJson(new URL(path, ROOT)) as Record<string, Record<string, string> | undefined>;
      const spec = m.dependencies?.bullmq ?? m.devDependencies?.bullmq;
      return spec === undefined ? [] : [{ path, spec }];
    });
    expect(pins.map((p) => p.path)).toContain('packages/queue/package.json');
    for (const { path, spec } of pins) expect(spec, `${path}: bullmq must be pinned to exactly ${installed}. ${LAYOUT_CHANGED}`).toBe(installed);

    const lock = readJson(new URL('package-lock.json', ROOT)) as { packages: Record<string, { version?: string; dependencies?: Record<string, string> }> };
    const locked = Object.entries(lock.packages).filter(([path]) => path.endsWith('node_modules/bullmq'));
    expect(
      locked.map(([path, p]) => [path, p.version]),
      LAYOUT_CHANGED,
    ).toEqual([['node_modules/bullmq', installed]]);
    for (const { path } of pins.filter((p) => p.path !== 'package.json'))
      expect(lock.packages[path.replace(/\/package\.json$/, '')]?.dependencies?.bullmq, `package-lock.json for ${path}`).toBe(installed);
  });

  it('is the one the scripts that touch its keys were written against', () => {
    const headers = [
      ...readdirSync(LUA)
        .filter((f) => f.endsWith('.lua'))
        .map((f) => ({ file: f, header: readLuaSource(new URL(f, LUA)).header })),
      ...readdirSync(new URL('includes/', LUA)).map((f) => ({ file: `includes/${f}`, header: readFileSync(new URL(`includes/${f}`, LUA), 'utf8') })),
    ];
    const fair = headers.filter((h) => h.file.includes('fair-'));
    expect(fair.length).toBe(3);
    // A script whose KEYS or ARGV lines name a key of BullMQ's names the version it was written against.
    const touchesBullmq = (header: string) => /^\s*(KEYS|ARGV)\[.*BullMQ/m.test(header);
    expect(fair.every((h) => touchesBullmq(h.header))).toBe(true);
    for (const { file, header } of headers.filter((h) => touchesBullmq(h.header))) {
      const named = /^\s*BullMQ layout: BullMQ (\S+) /m.exec(header)?.[1];
      expect(named, `${file}: its header names no "BullMQ layout: BullMQ <version>"`).toBeDefined();
      expect(named, `${file} was written against BullMQ ${named}, installed is ${installed}. ${LAYOUT_CHANGED}`).toBe(installed);
    }
  });
});

describe("BullMQ's private keys, as our scripts read and write them, on real Redis", () => {
  const prefix = `test-layout-${randomUUID()}`;
  let redis: RedisClient;
  const queues: Queue[] = [];
  const queue = (name: string) => {
    const q = new Queue(`{${name}-${randomUUID().slice(0, 8)}}`, { connection: redis, prefix, skipVersionCheck: true });
    queues.push(q);
    return q;
  };
  /** What a prioritized job is in Redis: its score's two halves, its hash's priority, and the marker. */
  const shapeOf = async (q: Queue, id: string) => {
    const score = Number(await redis.zscore(q.toKey('prioritized'), id));
    return {
      priority: Math.floor(score / SHIFT),
      counter: score % SHIFT,
      jobHashPriority: Number(await redis.hget(q.toKey('') + id, 'priority')),
      marker: await redis.zrange(q.toKey('marker'), 0, -1, 'WITHSCORES'),
    };
  };

  beforeAll(async () => {
    redis = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
    await new Promise((resolve) => redis.once('ready', resolve));
  });
  afterAll(async () => {
    await Promise.all(queues.map((q) => q.close()));
    if (redis) await deleteKeysWithPrefix(redis, prefix);
    await redis?.quit();
  });

  it('keep the key names, types and score layout the scripts assume', async () => {
    const q = queue('layout');
    const base = `${prefix}:${q.name}:`;
    for (const key of ['prioritized', 'pc', 'marker', 'meta']) expect(q.toKey(key), LAYOUT_CHANGED).toBe(base + key);
    expect(q.toKey(''), LAYOUT_CHANGED).toBe(base);
    // names.ts names a model queue's keys as BullMQ does (queueKey: what tests read Redis with).
    const model = `m-${randomUUID().slice(0, 8)}`;
    const named = new Queue(queueNameFor(model), { connection: redis, prefix, skipVersionCheck: true });
    queues.push(named);
    for (const key of ['prioritized', 'pc', 'marker', 'meta', 'j1']) expect(queueKey(prefix, model, key), LAYOUT_CHANGED).toBe(named.toKey(key));
    // Our classes split BullMQ's priority range in four (fair-priority.ts).
    expect(PRIORITY_LIMIT, LAYOUT_CHANGED).toBe(2 ** 21 - 1);
    expect(CLASS_RANGE, LAYOUT_CHANGED).toBe(Math.floor(PRIORITY_LIMIT / 4));

    await q.add('j', {}, { jobId: 'a', priority: 7 });
    await q.add('j', {}, { jobId: 'b', priority: 3 });
    const lowest = classRange('low').max;
    await q.add('j', {}, { jobId: 'c', priority: lowest });
    expect(await redis.type(q.toKey('prioritized')), LAYOUT_CHANGED).toBe('zset');
    expect(await redis.zrange(q.toKey('prioritized'), 0, -1, 'WITHSCORES'), `${LAYOUT_CHANGED} (score: priority * 2^32 + counter)`).toEqual([
      'b',
      String(3 * SHIFT + 2),
      'a',
      String(7 * SHIFT + 1),
      'c',
      String(lowest * SHIFT + 3),
    ]);
    expect(await redis.type(q.toKey('pc')), LAYOUT_CHANGED).toBe('string');
    expect(await redis.get(q.toKey('pc')), `${LAYOUT_CHANGED} (the priority counter)`).toBe('3');
    expect(await redis.type(q.toKey('a')), LAYOUT_CHANGED).toBe('hash');
    expect(await redis.hget(q.toKey('a'), 'priority'), `${LAYOUT_CHANGED} (the job hash's priority)`).toBe('7');
    expect(await redis.zrange(q.toKey('marker'), 0, -1, 'WITHSCORES'), `${LAYOUT_CHANGED} (the marker)`).toEqual(['0', '0']);
    // BullMQ reads the score layout as we count classes.
    expect(await q.getCountsPerPriority([3, 7, lowest]), LAYOUT_CHANGED).toEqual({ 3: 1, 7: 1, [lowest]: 1 });
    expect(await countWaitingPerClass(redis, q), LAYOUT_CHANGED).toEqual({ high: 2, normal: 0, low: 1, batch: 0 });

    await q.pause();
    expect(await redis.hexists(q.toKey('meta'), 'paused'), `${LAYOUT_CHANGED} (meta's paused flag)`).toBe(1);
    expect(await redis.exists(q.toKey('marker')), `${LAYOUT_CHANGED} (no marker while paused)`).toBe(0);
    await q.resume();
    expect(await redis.hexists(q.toKey('meta'), 'paused'), LAYOUT_CHANGED).toBe(0);
    expect(await redis.zrange(q.toKey('marker'), 0, -1, 'WITHSCORES'), LAYOUT_CHANGED).toEqual(['0', '0']);
  });

  it("re-add a job as BullMQ's own changePriority does, and BullMQ serves it so", async () => {
    const q = queue('promote');
    const jobs = [
      { tenant: 't1', priority: 'low' as const },
      { tenant: 't1', priority: 'low' as const },
      { tenant: 't2', priority: 'low' as const },
      { tenant: 't3', priority: 'low' as const },
    ];
    const priorities = await assignFairPriorities(redis, q, jobs);
    const low = classRange('low').min;
    expect(priorities).toEqual([low, low + 1, low, low]);
    await q.addBulk(priorities.map((priority, i) => ({ name: 'j', data: {}, opts: { jobId: `j${i}`, priority } })));

    // BullMQ's changePriority on one job, our promote on another: the same shape in Redis.
    await redis.del(q.toKey('marker'));
    const high = classRange('high').min;
    await (await q.getJob('j2'))!.changePriority({ priority: high });
    expect(await shapeOf(q, 'j2'), LAYOUT_CHANGED).toEqual({ priority: high, counter: 5, jobHashPriority: high, marker: ['0', '0'] });
    await redis.del(q.toKey('marker'));
    expect(await promoteJobs(redis, q, [{ id: 'j1', tenant: 't1', target: 'high' }])).toBe(1);
    const promoted = await shapeOf(q, 'j1');
    // t1's first number in the high class: where the class is now (j2), its finish there being none yet.
    expect(promoted, LAYOUT_CHANGED).toEqual({ priority: high, counter: 6, jobHashPriority: high, marker: ['0', '0'] });

    // BullMQ reads what our script wrote: the job's priority, the counts per priority, and the order a worker takes jobs in.
    expect((await q.getJob('j1'))!.priority, LAYOUT_CHANGED).toBe(high);
    expect(await q.getCountsPerPriority([high, low, low + 1]), LAYOUT_CHANGED).toEqual({ [high]: 2, [low]: 2, [low + 1]: 0 });
    expect(await countWaitingPerClass(redis, q), LAYOUT_CHANGED).toEqual({ high: 2, normal: 0, low: 2, batch: 0 });
    const worker = new Worker(q.name, null, { connection: duplicateForBlocking(redis), prefix, skipVersionCheck: true, autorun: false });
    try {
      const taken: string[] = [];
      for (let i = 0; i < 4; i++) taken.push((await worker.getNextJob('token', { block: false }))!.id!);
      // The promoted jobs first, each class in counter order.
      expect(taken, `${LAYOUT_CHANGED} (the order a worker takes jobs in)`).toEqual(['j2', 'j1', 'j0', 'j3']);
    } finally {
      await worker.close(true);
    }
  });

  it("leave the marker out while the queue is paused, as BullMQ's changePriority does", async () => {
    const q = queue('paused');
    const [priority] = await assignFairPriorities(redis, q, [{ tenant: 't1', priority: 'normal' }]);
    await q.add('j', {}, { jobId: 'p', priority: priority! });
    await q.pause();
    expect(await promoteJobs(redis, q, [{ id: 'p', tenant: 't1', target: 'high' }])).toBe(1);
    expect(await redis.exists(q.toKey('marker')), `${LAYOUT_CHANGED} (our script read meta's paused flag)`).toBe(0);
    await q.resume();
    expect(await redis.zrange(q.toKey('marker'), 0, -1, 'WITHSCORES'), LAYOUT_CHANGED).toEqual(['0', '0']);
    expect((await q.getJob('p'))!.priority).toBeLessThan(1 + CLASS_RANGE);
  });
});
