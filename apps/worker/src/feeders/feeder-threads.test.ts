import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createLogger } from '@inferq/core';
import { waitFor } from '@inferq/test-utils';
import type { WorkerConfig } from '../config.ts';
import type { FeederHost } from './feeder.ts';
import { startFeederThreads } from './feeder-threads.ts';

// Feeder threads' lives as main sees them, with stand-in threads that speak the protocol (no Postgres, no Redis): each
// starts (or fails to), answers a model's health and a close, and dies when its workerData says so.

const STAND_IN = `
import { parentPort, workerData } from 'node:worker_threads';
const { index, config } = workerData;
if (config.failStart === index) throw new Error('feeder ' + index + ' cannot reach Postgres');
parentPort.on('message', (m) => {
  if (m.type === 'model-health' && m.model === 'die' && config.dieOn === index) throw new Error('feeder ' + index + ' kaboom');
  parentPort.postMessage({ type: 'done', id: m.id });
  if (m.type === 'close') parentPort.unref();
});
if (!(config.neverStart ?? []).includes(index)) parentPort.postMessage({ type: 'started' });
if (config.dieOnceStarted === index) throw new Error('feeder ' + index + ' started, then died');
`;

let dir: string;
let entry: URL;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inferq-feeder-threads-'));
  await writeFile(join(dir, 'stand-in.mjs'), STAND_IN);
  entry = pathToFileURL(join(dir, 'stand-in.mjs'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const logger = createLogger({ service: 'test', level: 'silent' });
const host = {
  sessions: {},
  health: { isFaulted: () => false },
  status: { setModelsServed: vi.fn() },
  metrics: {},
} as unknown as FeederHost;
const start = (config: Record<string, unknown>, onLost = vi.fn()) =>
  startFeederThreads({ count: 3, config: config as unknown as WorkerConfig, workerId: 'w', logger, host, onLost, entry });

describe('feeder threads, from the main thread', () => {
  it("start, take every model's health change, report their event-loop use, and close", async () => {
    const threads = await start({});
    await threads.pause('m');
    await threads.resume('m');
    const load = threads.load();
    expect(load).toHaveLength(3);
    for (const u of load) expect(u).toBeGreaterThanOrEqual(0);
    await threads.close();
  });

  it('fail to start as one: a feeder that cannot start, or ends while the others start, rejects the start', async () => {
    const onLost = vi.fn();
    await expect(start({ failStart: 1 }, onLost)).rejects.toThrow('feeder 1 cannot reach Postgres');
    // The others never say they started: only the one that ended can end the start.
    await expect(start({ dieOnceStarted: 0, neverStart: [1, 2] }, onLost)).rejects.toThrow('feeder 0 started, then died');
    expect(onLost).not.toHaveBeenCalled();
  });

  it('report a feeder thread that dies while running as lost, once, with its error', async () => {
    const onLost = vi.fn();
    const error = vi.spyOn(logger, 'error');
    const threads = await start({ dieOn: 2 }, onLost);
    await threads.pause('die');
    await waitFor(() => onLost.mock.calls.length > 0, { what: 'the lost feeder to be reported' });
    expect(onLost).toHaveBeenCalledTimes(1);
    expect(onLost.mock.calls[0]![0]).toMatchObject({ message: 'feeder 2 kaboom' });
    expect(error).toHaveBeenCalledWith(expect.objectContaining({ feeder: 2 }), expect.stringContaining('feeder thread died'));
    // The others still take a model's health change, and close.
    await threads.pause('m');
    await threads.close();
    expect(onLost).toHaveBeenCalledTimes(1);
  });
});
