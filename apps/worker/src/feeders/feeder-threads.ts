import type { Worker } from 'node:worker_threads';
import type { Logger } from '@inferq/core';
import { spawnThread } from '@inferq/inference';
import type { WorkerConfig } from '../config.ts';
import type { Feeder, FeederHost } from './feeder.ts';
import type { FeederThreadData } from './feeder-protocol.ts';
import { serveFeeder, type FeederLink } from './host-server.ts';

/** How long a feeder that has closed gets to end its thread (its last logs written) before it is terminated. */
const EXIT_GRACE_MS = 5_000;

/** The thread's entry beside this module: the .ts source (tsx), or feeder-thread.js beside the bundle (scripts/build-server.mjs). */
const feederEntry = (): URL => new URL(import.meta.url.endsWith('.ts') ? './feeder-thread.ts' : './feeder-thread.js', import.meta.url);

export interface FeederThreadsOptions {
  count: number;
  config: WorkerConfig;
  workerId: string;
  logger: Logger;
  /** The device's one copy of each: every feeder's calls and notes go to them. */
  host: FeederHost;
  /** A feeder thread died while not closing: the worker process must not go on without it. */
  onLost(err: Error): void;
  /** Test seam: the threads' entry module. @default feeder-thread.ts (or .js) beside this module */
  entry?: URL;
}

/**
 * The feeders as one: pause and resume reach every feeder (each mirrors the model's fault), models are every model
 * some feeder serves, and close drains every feeder, closes its connections and resolves once all threads have ended.
 */
export interface FeederThreads extends Feeder {
  /** Each feeder thread's event-loop utilisation (0–1) since it started. */
  load(): number[];
}

interface FeederThread {
  index: number;
  worker: Worker;
  link: FeederLink;
  exited: Promise<void>;
  /** Terminates the thread; its exit is then no failure of its own. */
  stop(): Promise<void>;
}

/**
 * Starts `count` feeder threads (feeder-thread.ts), each running the per-job path on its own connections, and
 * answers them with the device's host (host-server.ts): one copy of each model's session, one model health, status
 * and metrics registry for all. A model's fault pauses it on every feeder. Resolves once every feeder has started;
 * rejects, with the threads stopped, if one cannot.
 */
export async function startFeederThreads(o: FeederThreadsOptions): Promise<FeederThreads> {
  let phase: 'starting' | 'running' | 'closing' = 'starting';
  const served: string[][] = Array.from({ length: o.count }, () => []);
  const servedByAny = (): string[] => [...new Set(served.flat())];

  /** The device's host as feeder `index` reaches it: the models it serves join the others', and its series of a faulted model stay 1. */
  const hostFor = (index: number): FeederHost => ({
    sessions: o.host.sessions,
    health: o.host.health,
    status: {
      ...o.host.status,
      setModelsServed: (models) => {
        served[index] = models;
        o.host.status.setModelsServed(servedByAny());
      },
    },
    metrics: {
      ...o.host.metrics,
      // A feeder that starts serving a model sets its series to 0: not while another feeder's fault holds the model.
      modelFaulted: (model, faulted) => o.host.metrics.modelFaulted(model, faulted || o.host.health.isFaulted(model)),
    },
  });

  // Rejected by the first feeder thread to end while they start, whether or not it had said it started.
  let failStart!: (err: Error) => void;
  const startFailed = new Promise<never>((_, reject) => (failStart = reject));
  startFailed.catch(() => {});

  function spawn(index: number): FeederThread {
    const data: FeederThreadData = { config: o.config, workerId: o.workerId, index };
    const worker = spawnThread(o.entry ?? feederEntry(), data);
    const link = serveFeeder(worker, hostFor(index));
    let failure: Error | undefined;
    let stopped = false;
    worker.on('error', (err: Error) => (failure = err));
    const exited = new Promise<void>((resolve) =>
      worker.once('exit', (code: number) => {
        const err = failure ?? new Error(`feeder thread ${index} exited with code ${code}`);
        link.lost(err);
        resolve();
        if (stopped || (phase === 'closing' && !failure && code === 0)) return;
        if (phase === 'running') {
          o.logger.error({ feeder: index, err }, 'feeder thread died; the worker process exits (its launcher restarts it, BullMQ returns the jobs it held)');
          o.onLost(err);
        } else if (phase === 'starting') {
          o.logger.error({ feeder: index, err }, 'feeder thread failed to start');
          failStart(err);
        } else o.logger.error({ feeder: index, err }, 'feeder thread failed while closing');
      }),
    );
    const stop = async (): Promise<void> => {
      stopped = true;
      await worker.terminate();
    };
    return { index, worker, link, exited, stop };
  }

  const threads = Array.from({ length: o.count }, (_, index) => spawn(index));
  try {
    await Promise.race([Promise.all(threads.map((t) => t.link.started)), startFailed]);
  } catch (err) {
    phase = 'closing';
    await Promise.all(threads.map((t) => t.stop()));
    throw err;
  }
  phase = 'running';

  /** Tells every feeder; one that is gone is skipped (the process is exiting for it). */
  const toEvery = async (model: string, faulted: boolean): Promise<void> => {
    await Promise.allSettled(threads.map((t) => t.link.setHealth(model, faulted)));
  };

  return {
    pause: (model) => toEvery(model, true),
    resume: (model) => toEvery(model, false),
    models: servedByAny,
    load: () => threads.map((t) => t.worker.performance.eventLoopUtilization().utilization),
    async close(): Promise<void> {
      phase = 'closing';
      await Promise.all(
        threads.map(async (t) => {
          await t.link.close().catch((err: Error) => o.logger.warn({ feeder: t.index, err: err.message }, 'feeder thread did not close cleanly'));
          const lingering = setTimeout(() => {
            o.logger.warn({ feeder: t.index, graceMs: EXIT_GRACE_MS }, 'feeder thread still running after it closed; terminating it');
            void t.stop();
          }, EXIT_GRACE_MS);
          await t.exited;
          clearTimeout(lingering);
        }),
      );
    },
  };
}
