import { MessageChannel, type MessagePort } from 'node:worker_threads';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RawTensor } from '@inferq/contracts';
import { AppError, createLogger, isAppError } from '@inferq/core';
import { isDatabaseUnavailable, type ModelRecord, type Pool } from '@inferq/db';
import { ModelLoadError, type BatchRunResult, type ModelSession } from '@inferq/inference';
import { isStorageUnavailable } from '@inferq/storage';
import { waitFor } from '@inferq/test-utils';
import type { ModelCache } from '../sessions/model-cache.ts';
import { createModelHealth } from '../sessions/model-health.ts';
import { createModelSessions } from '../sessions/model-sessions.ts';
import { ownerOfLoadFailure } from '../sessions/node-faults.ts';
import type { FeederHost } from './feeder.ts';
import { fromWireError, toWireError } from './feeder-protocol.ts';
import { createHostProxy, type FeederControls } from './host-proxy.ts';
import { serveFeeder } from './host-server.ts';

// A feeder's host over a real MessageChannel, no thread: the proxy a feeder thread holds (host-proxy.ts) against the
// server main runs for it (host-server.ts), with main's real ModelSessions and ModelHealth behind.

const logger = createLogger({ service: 'test', level: 'silent' });
const ports: MessagePort[] = [];
afterEach(() => {
  for (const p of ports.splice(0)) p.close();
});

const record: ModelRecord = {
  id: 'm-1',
  name: 'm',
  version: 1,
  artifactKey: 'models/m/1',
  sha256: 'm1',
  sizeBytes: 1024,
  createdAt: new Date(0).toISOString(),
  responseCache: false,
  tokenizerKey: null,
  signature: { inputs: [{ name: 'x', datatype: 'UINT8', shape: [-1, 4] }], outputs: [{ name: 'y', datatype: 'UINT8', shape: [-1, 4] }], batchable: true },
  batching: { maxBatchSize: 8, maxBatchDelayMs: 5, mode: 'fixed', latencyTargetMs: null },
};

const tensor = (bytes: number[]): RawTensor => ({ name: 'x', datatype: 'UINT8', shape: [1, bytes.length], data: Uint8Array.from(bytes) });

/** A session thread stand-in: a run gives each job's bytes back plus one, or rejects while `failing`. */
function openedSessions() {
  const opened: Array<ModelSession & { runs: RawTensor[][][]; failing: boolean; closed: boolean }> = [];
  const open = async (): Promise<ModelSession> => {
    const s = {
      provider: 'cpu',
      failedProviders: [],
      inputNames: ['x'],
      outputNames: ['y'],
      runs: [] as RawTensor[][][],
      failing: false,
      closed: false,
      async infer(jobs: Array<{ inputs: RawTensor[] }>): Promise<BatchRunResult> {
        s.runs.push(jobs.map((j) => j.inputs));
        if (s.failing) throw new Error('session thread exited with code 1');
        return {
          inferMs: 1,
          mode: 'batched',
          results: jobs.map((j) => ({ ok: true as const, outputs: j.inputs.map((t) => ({ ...t, name: 'y', data: t.data.map((b) => b + 1) })) })),
        };
      },
      async close() {
        s.closed = true;
      },
    };
    opened.push(s);
    return s;
  };
  return { opened, open };
}

/** Main's device objects: real sessions (over the stand-in) and health; status and metrics as spies. */
function device(probe: () => Promise<void> = async () => {}) {
  const { opened, open } = openedSessions();
  const sessions = createModelSessions({
    pool: {} as Pool,
    logger,
    lifecycle: { warmup: false },
    cache: { ensureModelFile: async () => '/cache/m1.onnx' } as unknown as ModelCache,
    settings: { device: 'cpu', providers: undefined, intraOpNumThreads: 0, interOpNumThreads: 0 },
    findModel: async (name) => (name === 'm' ? record : undefined),
    openSession: open,
  });
  const links: Array<ReturnType<typeof serveFeeder>> = [];
  // As feeder-threads.ts: a model's health change reaches every feeder.
  const health = createModelHealth({
    logger,
    minBackoffMs: 10,
    pause: async (model) => void (await Promise.allSettled(links.map((l) => l.setHealth(model, true)))),
    resume: async (model) => void (await Promise.allSettled(links.map((l) => l.setHealth(model, false)))),
    probe: async () => probe(),
  });
  const status = { batchStarted: vi.fn(), batchEnded: vi.fn(), adaptiveBatching: vi.fn(), setModelsServed: vi.fn() };
  const metrics = { batchStarted: vi.fn(), batchRan: vi.fn(), jobsFinished: vi.fn(), jobsReleased: vi.fn(), jobsRecordLost: vi.fn(), modelFaulted: vi.fn() };
  const host: FeederHost = { sessions, health, status, metrics };
  /** A feeder over a channel of its own, with its controls as spies. */
  function feeder() {
    const { port1, port2 } = new MessageChannel();
    ports.push(port1, port2);
    const link = serveFeeder(port2, host);
    links.push(link);
    const proxy = createHostProxy(port1, logger);
    const controls: FeederControls = { pause: vi.fn(async () => {}), resume: vi.fn(async () => {}), close: vi.fn(async () => {}) };
    return { link, proxy, controls };
  }
  return { opened, sessions, health, status, metrics, feeder };
}

describe('a feeder thread reaching the device host over its port', () => {
  it('runs a batch on the one shared session; tensor bytes move both ways, not copy', async () => {
    const d = device();
    const [a, b] = [d.feeder(), d.feeder()];
    const session = await a.proxy.host.sessions.getSession('m', 1);
    expect(session).toMatchObject({ provider: 'cpu', inputNames: ['x'], outputNames: ['y'] });
    const inputs = [tensor([1, 2, 3, 4]), tensor([5, 6, 7, 8])];
    const run = await session.infer(inputs.map((t) => ({ inputs: [t] })));
    // Moved to main: detached here.
    expect(inputs.map((t) => t.data.byteLength)).toEqual([0, 0]);
    expect(run.results.map((r) => (r.ok ? [...r.outputs[0]!.data] : []))).toEqual([
      [2, 3, 4, 5],
      [6, 7, 8, 9],
    ]);
    // A second feeder gets the same loaded model: one load for the device.
    await (await b.proxy.host.sessions.getSession('m', 1)).infer([{ inputs: [tensor([0, 0, 0, 0])] }]);
    expect(d.opened).toHaveLength(1);
    expect(d.sessions.loaded()).toEqual([expect.objectContaining({ model: 'm', version: 1 })]);
  });

  it("discards only the session whose run failed; a later feeder's discard of the old one changes nothing", async () => {
    const d = device();
    const f = d.feeder();
    const first = await f.proxy.host.sessions.getSession('m', 1);
    d.opened[0]!.failing = true;
    await expect(first.infer([{ inputs: [tensor([1, 1, 1, 1])] }])).rejects.toThrow('session thread exited with code 1');
    await f.proxy.host.sessions.discard('m', 1, first);
    expect(d.opened[0]!.closed).toBe(true);
    expect(d.sessions.loaded()).toEqual([]);
    // The model loads afresh; a stale discard (of the failed session again) leaves the new one loaded.
    const second = await f.proxy.host.sessions.getSession('m', 1);
    await second.infer([{ inputs: [tensor([1, 1, 1, 1])] }]);
    await f.proxy.host.sessions.discard('m', 1, first);
    expect(d.opened).toHaveLength(2);
    expect(d.opened[1]!.closed).toBe(false);
    expect(d.sessions.loaded()).toHaveLength(1);
  });

  it('passes errors with the class and fields the batch runner decides by', async () => {
    const d = device();
    const f = d.feeder();
    const missing = await f.proxy.host.sessions.getSession('nope', 1).catch((err: unknown) => err);
    expect(isAppError(missing)).toBe(true);
    expect(missing).toMatchObject({ code: 'MODEL_NOT_FOUND', retryable: false });
    expect(ownerOfLoadFailure(missing)).toBe('model');

    const cross = (err: unknown) => fromWireError(structuredClone(toWireError(err)));
    const loadFailed = cross(new ModelLoadError('no provider started', [{ provider: 'cuda', reason: 'CUDA out of memory' }]));
    expect(loadFailed).toBeInstanceOf(ModelLoadError);
    expect(ownerOfLoadFailure(loadFailed)).toBe('suspect');
    const denied = cross(Object.assign(new Error('Access Denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }));
    expect(ownerOfLoadFailure(denied)).toBe('node');
    expect(isStorageUnavailable(cross(Object.assign(new Error('down'), { code: 'ECONNREFUSED', $metadata: {} })))).toBe(true);
    expect(isDatabaseUnavailable(cross(Object.assign(new Error('terminating connection'), { code: '57P01' })))).toBe(true);
    expect(cross(new AppError('QUEUE_FULL', 'full'))).toMatchObject({ code: 'QUEUE_FULL', message: 'full' });
    expect(cross('a string')).toMatchObject({ message: 'a string' });
  });

  it("sends the status and metrics only plain fields: never a job's queue handle", async () => {
    const d = device();
    const { proxy } = d.feeder();
    const job = { jobId: 'j1', model: 'm', modelVersion: 1, priority: 'high' as const, createdAtMs: 123, ack: { ack: () => {} } };
    proxy.host.metrics.batchStarted([job]);
    proxy.host.metrics.jobsFinished([job], 'succeeded');
    proxy.host.metrics.jobsReleased([job]);
    proxy.host.metrics.batchRan('m', 1, 2.5);
    proxy.host.status.batchStarted('b1', 'm', 1);
    proxy.host.status.batchEnded('b1');
    proxy.host.status.setModelsServed(['m']);
    await waitFor(() => d.status.setModelsServed.mock.calls.length === 1, { what: 'the notes to arrive' });
    const plain = [{ model: 'm', priority: 'high', createdAtMs: 123 }];
    expect(d.metrics.batchStarted).toHaveBeenCalledWith(plain);
    expect(d.metrics.jobsFinished).toHaveBeenCalledWith(plain, 'succeeded');
    expect(d.metrics.jobsReleased).toHaveBeenCalledWith(plain);
    expect(d.metrics.batchRan).toHaveBeenCalledWith('m', 1, 2.5);
    expect(d.status.batchStarted).toHaveBeenCalledWith('b1', 'm', 1);
    expect(d.status.batchEnded).toHaveBeenCalledWith('b1', undefined);
    expect(d.status.setModelsServed).toHaveBeenCalledWith(['m']);
  });

  it('fans a fault one feeder reports out to every feeder (mirror and consumer), and the recovery after it', async () => {
    let loads = false;
    const d = device(async () => {
      if (!loads) throw new Error('still cannot load');
    });
    const feeders = [d.feeder(), d.feeder(), d.feeder()];
    for (const f of feeders) f.proxy.serve(f.controls);
    await feeders[1]!.proxy.host.health.fault('m', 1, 'MODEL_LOAD_FAILED', 'S3 refused the credentials');
    // Done once every feeder has paused the model, as in process once its one consumer had.
    for (const f of feeders) {
      expect(f.proxy.host.health.isFaulted('m')).toBe(true);
      expect(f.controls.pause).toHaveBeenCalledWith('m');
      expect(f.proxy.host.health.isFaulted('other')).toBe(false);
    }
    expect(d.health.faults()).toEqual([expect.objectContaining({ model: 'm', code: 'MODEL_LOAD_FAILED' })]);
    loads = true;
    await waitFor(() => feeders.every((f) => !f.proxy.host.health.isFaulted('m')), { what: 'every feeder to see the recovery' });
    await waitFor(() => feeders.every((f) => vi.mocked(f.controls.resume).mock.calls.length === 1), { what: 'every feeder to resume the model' });
    d.health.close();
  });

  it('closes the feeder when main asks, even when asked before the feeder has started', async () => {
    const d = device();
    const f = d.feeder();
    const closed = f.link.close();
    await f.proxy.host.sessions.getSession('m', 1);
    expect(f.controls.close).not.toHaveBeenCalled();
    f.proxy.serve(f.controls);
    await closed;
    expect(f.controls.close).toHaveBeenCalledTimes(1);
  });

  it('gives back what a lost feeder held: a session lent and not run goes back; calls to it fail', async () => {
    const d = device();
    const f = d.feeder();
    const started = f.link.started;
    await f.proxy.host.sessions.getSession('m', 1);
    f.link.lost(new Error('feeder thread 0 exited with code 1'));
    await expect(started).rejects.toThrow('exited with code 1');
    await expect(f.link.setHealth('m', true)).rejects.toThrow('exited with code 1');
    // Not held by the lost feeder's lease any more: idle, so it unloads.
    await d.sessions.unloadVersions([{ model: 'm', version: 1 }], 'retired');
    expect(d.sessions.loaded()).toEqual([]);
  });
});
