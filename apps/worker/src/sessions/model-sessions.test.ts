import { describe, expect, it, vi } from 'vitest';
import type { ModelEvent, RawTensor } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import type { ModelRecord, Pool } from '@inferq/db';
import type { BatchRunResult, ModelSession } from '@inferq/inference';
import type { ModelCache } from './model-cache.ts';
import { createModelSessions, type SessionLifecycle } from './model-sessions.ts';

const MB = 2 ** 20;
const logger = createLogger({ service: 'test', level: 'silent' });

const record = (name: string, version: number, sizeBytes = MB): ModelRecord => ({
  id: `${name}-${version}`,
  name,
  version,
  artifactKey: `models/${name}/${version}`,
  sha256: `${name}${version}`,
  sizeBytes,
  createdAt: new Date(0).toISOString(),
  responseCache: false,
  tokenizerKey: null,
  signature: {
    inputs: [
      { name: 'x', datatype: 'FP32', shape: [-1, 4] },
      { name: 'mask', datatype: 'BOOL', shape: [-1, -1] },
    ],
    outputs: [{ name: 'y', datatype: 'FP32', shape: [-1, 2] }],
    batchable: true,
  },
  batching: { maxBatchSize: 8, maxBatchDelayMs: 5, mode: 'fixed', latencyTargetMs: null },
});

/** A session whose runs resolve at once, or when the test says (`hold`). */
function fakeSession(path: string) {
  const runs: RawTensor[][][] = [];
  let gate: Promise<void> | undefined;
  const ok = (jobs: Array<{ inputs: RawTensor[] }>): BatchRunResult => ({ inferMs: 1, mode: 'single', results: jobs.map(() => ({ ok: true, outputs: [] })) });
  const session = {
    path,
    runs,
    provider: 'cpu',
    failedProviders: [],
    inputNames: ['x', 'mask'],
    outputNames: ['y'],
    closed: false,
    failRuns: false,
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return release;
    },
    async infer(jobs: Array<{ inputs: RawTensor[] }>) {
      runs.push(jobs.map((j) => j.inputs));
      if (session.failRuns) throw new Error('thread died');
      await gate;
      return ok(jobs);
    },
    close: vi.fn(async () => {
      session.closed = true;
    }),
  };
  return session;
}
type FakeSession = ReturnType<typeof fakeSession>;

function setup(
  lifecycle: Partial<SessionLifecycle> = {},
  records = [record('a', 1), record('a', 2), record('b', 1), record('c', 1)],
  onOpen?: (s: FakeSession, index: number) => void,
) {
  let clockMs = 1_000_000;
  const opened: FakeSession[] = [];
  const events: ModelEvent[] = [];
  const metrics = { modelLoaded: vi.fn(), modelWarmed: vi.fn() };
  const warn = vi.spyOn(logger, 'warn');
  const sessions = createModelSessions({
    pool: {} as Pool,
    logger,
    metrics,
    lifecycle,
    cache: { ensureModelFile: async (a) => `/cache/${a.sha256}.onnx` } as ModelCache,
    settings: { device: 'cpu', providers: undefined, intraOpNumThreads: 0, interOpNumThreads: 0 },
    onEvent: (e) => events.push(e),
    findModel: async (name, version) => records.filter((r) => r.name === name && (version === undefined || r.version === version)).at(-1),
    openSession: async (o) => {
      const s = fakeSession(o.modelPath);
      onOpen?.(s, opened.length);
      opened.push(s);
      return s as unknown as ModelSession;
    },
    nowMs: () => clockMs,
  });
  const summary = () => events.map((e) => `${e.model}:${e.version} ${e.event}${e.reason ? ` ${e.reason}` : ''}`);
  return { sessions, opened, events, metrics, warn, summary, advance: (ms: number) => (clockMs += ms) };
}

const job = [{ inputs: [] as RawTensor[] }];

describe('model sessions: warm-up', () => {
  it('runs one zero-filled batch right after the load, dynamic dims as 1, and reports it', async () => {
    const t = setup();
    const session = await t.sessions.getSession('a', 1);
    expect(t.opened).toHaveLength(1);
    const [warmup] = t.opened[0]!.runs;
    expect(warmup).toEqual([
      [
        { name: 'x', datatype: 'FP32', shape: [1, 4], data: new Uint8Array(16) },
        { name: 'mask', datatype: 'BOOL', shape: [1, 1], data: new Uint8Array(1) },
      ],
    ]);
    expect(t.summary()).toEqual(['a:1 loaded', 'a:1 warmed']);
    expect(t.events[1]!.ms).toBeGreaterThanOrEqual(0);
    expect(t.metrics.modelLoaded).toHaveBeenCalledOnce();
    expect(t.metrics.modelWarmed).toHaveBeenCalledWith('a', expect.any(Number));
    await session.infer(job);
    expect(t.opened[0]!.runs).toHaveLength(2);
  });

  it('skips it when turned off', async () => {
    const t = setup({ warmup: false });
    await t.sessions.getSession('a', 1);
    expect(t.opened[0]!.runs).toHaveLength(0);
    expect(t.summary()).toEqual(['a:1 loaded']);
  });

  it('reopens the session without warm-up when the warm-up run kills its thread', async () => {
    const t = setup({}, undefined, (s, i) => (s.failRuns = i === 0));
    const session = await t.sessions.getSession('a', 1);
    expect(t.opened).toHaveLength(2);
    expect(t.opened[0]!.closed).toBe(true);
    expect(await session.infer(job)).toMatchObject({ results: [{ ok: true }] });
    expect(t.summary()).toEqual(['a:1 loaded']);
  });
});

describe('model sessions: idle unload', () => {
  it('unloads a model no batch used for the idle time, and loads it again on the next batch', async () => {
    const t = setup({ idleUnloadMs: 10_000 });
    await (await t.sessions.getSession('a', 1)).infer(job);
    t.advance(9_999);
    await t.sessions.unloadIdle();
    expect(t.sessions.loaded()).toHaveLength(1);
    t.advance(1);
    await t.sessions.unloadIdle();
    expect(t.sessions.loaded()).toEqual([]);
    expect(t.opened[0]!.closed).toBe(true);
    expect(t.summary()).toEqual(['a:1 loaded', 'a:1 warmed', 'a:1 unloaded idle']);
    await (await t.sessions.getSession('a', 1)).infer(job);
    expect(t.opened).toHaveLength(2);
  });

  it('never unloads a session a batch holds, from getSession until its run settles', async () => {
    const t = setup({ idleUnloadMs: 1_000 });
    const leased = await t.sessions.getSession('a', 1);
    t.advance(5_000);
    await t.sessions.unloadIdle();
    expect(t.opened[0]!.closed).toBe(false);
    const release = t.opened[0]!.hold();
    const running = leased.infer(job);
    t.advance(5_000);
    await t.sessions.unloadIdle();
    expect(t.opened[0]!.closed).toBe(false);
    release();
    await running;
    t.advance(999);
    await t.sessions.unloadIdle();
    expect(t.opened[0]!.closed).toBe(false);
    t.advance(1);
    await t.sessions.unloadIdle();
    expect(t.opened[0]!.closed).toBe(true);
  });

  it('does nothing when the idle time is 0', async () => {
    const t = setup();
    await (await t.sessions.getSession('a', 1)).infer(job);
    t.advance(10 ** 9);
    await t.sessions.unloadIdle();
    expect(t.sessions.loaded()).toHaveLength(1);
  });

  it('reports when each loaded model was last used', async () => {
    const t = setup();
    const s = await t.sessions.getSession('a', 1);
    t.advance(60_000);
    await s.infer(job);
    const [loaded] = t.sessions.loaded();
    expect(loaded).toMatchObject({ model: 'a', version: 1, provider: 'cpu' });
    expect(Date.parse(loaded!.lastUsedAt!)).toBe(1_060_000);
  });
});

describe('model sessions: memory budget', () => {
  // Each 1 MiB artifact is reckoned at 2 MiB loaded.
  it('unloads the least recently used idle models to make room, and only as many as needed', async () => {
    const t = setup({ memoryBudgetBytes: 4 * MB });
    await (await t.sessions.getSession('a', 1)).infer(job);
    t.advance(1);
    await (await t.sessions.getSession('b', 1)).infer(job);
    t.advance(1);
    await (await t.sessions.getSession('a', 1)).infer(job);
    await t.sessions.getSession('c', 1).then((s) => s.infer(job));
    expect(
      t.sessions
        .loaded()
        .map((m) => m.model)
        .sort(),
    ).toEqual(['a', 'c']);
    expect(t.summary().filter((e) => e.includes('unloaded'))).toEqual(['b:1 unloaded memory']);
  });

  it('skips models a batch holds, and loads anyway with a warning when nothing can go', async () => {
    const t = setup({ memoryBudgetBytes: 3 * MB });
    const held = await t.sessions.getSession('a', 1);
    await t.sessions.getSession('b', 1);
    expect(t.sessions.loaded()).toHaveLength(2);
    expect(t.summary().some((e) => e.includes('unloaded'))).toBe(false);
    expect(t.warn).toHaveBeenCalledWith(expect.objectContaining({ model: 'b', budgetMb: 3 }), 'model memory budget exceeded; loading anyway');
    await held.infer(job);
  });

  it('has no limit at 0', async () => {
    const t = setup({ memoryBudgetBytes: 0 }, [record('a', 1, 10 ** 9), record('b', 1, 10 ** 9)]);
    await t.sessions.getSession('a', 1);
    await t.sessions.getSession('b', 1);
    expect(t.sessions.loaded()).toHaveLength(2);
  });
});

describe('model sessions: preload and discard', () => {
  it('preloads the latest version when none is named, without holding it', async () => {
    const t = setup({ idleUnloadMs: 1 });
    expect(await t.sessions.preload('a')).toBe(2);
    expect(await t.sessions.preload('b', 1)).toBe(1);
    await expect(t.sessions.preload('nope')).rejects.toMatchObject({ code: 'MODEL_NOT_FOUND' });
    expect(t.summary()).toEqual(['a:2 loaded', 'a:2 warmed', 'b:1 loaded', 'b:1 warmed']);
    t.advance(1);
    await t.sessions.unloadIdle();
    expect(t.sessions.loaded()).toEqual([]);
  });

  it('refuses to preload a retired version, yet loads it for the jobs already queued, and unloads it when told, never under a batch', async () => {
    const t = setup({}, [record('a', 1), { ...record('a', 2), retiredAt: new Date(0).toISOString() }]);
    await expect(t.sessions.preload('a', 2)).rejects.toMatchObject({ code: 'MODEL_VERSION_RETIRED' });
    await t.sessions.ensureLoaded('a', 2);
    const held = await t.sessions.getSession('a', 2);
    await t.sessions.unloadVersions([{ model: 'a', version: 2 }], 'retired');
    expect(t.sessions.loaded().map((m) => `${m.model}:${m.version}`)).toEqual(['a:2']);
    await held.infer(job);
    await t.sessions.unloadVersions([{ model: 'a', version: 2 }], 'retired');
    expect(t.sessions.loaded()).toEqual([]);
    expect(t.summary()).toEqual(['a:2 loaded', 'a:2 warmed', 'a:2 unloaded retired']);
  });

  it('discards a session whose thread died, once, and loads afresh next time', async () => {
    const t = setup();
    const s = await t.sessions.getSession('a', 1);
    t.opened[0]!.failRuns = true;
    await expect(s.infer(job)).rejects.toThrow('thread died');
    await t.sessions.discard('a', 1, s);
    await t.sessions.discard('a', 1, s);
    expect(t.summary()).toEqual(['a:1 loaded', 'a:1 warmed', 'a:1 unloaded thread-failed']);
    await t.sessions.getSession('a', 1);
    expect(t.opened).toHaveLength(2);
  });
});
