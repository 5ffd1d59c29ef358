import type { Logger } from '@inferq/core';
import { listBuffers, ownBatchBuffers, postWithTransfer, type ModelSession } from '@inferq/inference';
import type { FeederHost } from './feeder.ts';
import {
  fromWireError,
  measured,
  toWireError,
  type ControlDone,
  type FeederControl,
  type FeederNote,
  type FeederPort,
  type HostCall,
  type HostCallResults,
  type MainMessage,
} from './feeder-protocol.ts';
import { createPendingCalls } from './pending-calls.ts';

/** What main's requests reach in the feeder: its consumers (a model's health) and its close. */
export interface FeederControls {
  pause(model: string): Promise<void>;
  resume(model: string): Promise<void>;
  /** Drains the feeder and closes its connections. */
  close(): Promise<void>;
}

export interface HostProxy {
  /** The device's host, as a feeder thread sees it: every call goes to main over the port. */
  host: FeederHost;
  /**
   * Main's requests go to `controls` from now on. A model health change that came before only set the mirror (no
   * consumer existed yet; one created later starts paused), and a close that came before runs now.
   */
  serve(controls: FeederControls): void;
  /** Tells main the feeder has started (its first model refresh is done). */
  started(): void;
}

type CallFields<K extends HostCall['type']> = Omit<Extract<HostCall, { type: K }>, 'id' | 'type'>;

/**
 * The feeder thread's end of its port to main (host-server.ts is the other): sessions, health, status and metrics as
 * FeederHost. Calls that want an answer (a session, a run, a discard, a fault) wait for main's; status and metrics
 * go unanswered. A run's tensor bytes move, not copy, both ways. isFaulted answers from a mirror of main's model
 * health, kept by main's model-health messages, so the batch runner's check stays synchronous.
 */
export function createHostProxy(port: FeederPort, logger: Logger): HostProxy {
  const calls = createPendingCalls();
  const faulted = new Set<string>();
  const tokens = new WeakMap<ModelSession, number>();
  let controls: FeederControls | undefined;
  let closeBeforeServe: FeederControl | undefined;
  // A model's health changes one at a time, in order: a pause is done before a resume that follows it starts. A close
  // goes apart: its drain may wait on a fault whose pause must reach this feeder.
  let healthChanges = Promise.resolve();

  const note = (n: FeederNote): void => port.postMessage(n);
  const call = <K extends HostCall['type']>(type: K, fields: CallFields<K>, transfer: ArrayBuffer[] = []): Promise<HostCallResults[K]> =>
    calls.call((id) => postWithTransfer(port, { type, id, ...fields }, transfer));

  async function control(m: FeederControl): Promise<void> {
    let error;
    try {
      if (m.type === 'model-health') {
        if (m.faulted) faulted.add(m.model);
        else faulted.delete(m.model);
        await (m.faulted ? controls?.pause(m.model) : controls?.resume(m.model));
        logger.info({ model: m.model }, m.faulted ? 'model paused on this feeder: the worker cannot load it' : 'model resumed on this feeder');
      } else if (!controls) {
        closeBeforeServe = m;
        return;
      } else {
        await controls.close();
      }
    } catch (err) {
      error = toWireError(err);
    }
    port.postMessage({ type: 'done', id: m.id, error } satisfies ControlDone);
    // The feeder's last message: nothing of the port's keeps the thread alive once its work has ended.
    if (m.type === 'close') port.unref?.();
  }

  port.on('message', (m: MainMessage) => {
    if (m.type === 'reply') calls.settle(m.id, m.ok ? { ok: true, value: m.value } : { ok: false, error: fromWireError(m.error) });
    else if (m.type === 'model-health') healthChanges = healthChanges.then(() => control(m));
    else void control(m);
  });

  const host: FeederHost = {
    sessions: {
      async getSession(model, version) {
        const lent = await call('get-session', { model, version });
        const session: ModelSession = {
          provider: lent.provider,
          failedProviders: lent.failedProviders,
          providerPairing: lent.providerPairing,
          placement: lent.placement,
          inputNames: lent.inputNames,
          outputNames: lent.outputNames,
          infer(jobs) {
            // As ModelSession.infer: the inputs' bytes move to main, which moves them on to the session thread.
            const owned = ownBatchBuffers(jobs.map((job) => job.inputs)).map((inputs) => ({ inputs }));
            return call('infer', { token: lent.token, jobs: owned }, listBuffers(owned.flatMap((job) => job.inputs)));
          },
          close: () => call('release', { token: lent.token }),
        };
        tokens.set(session, lent.token);
        return session;
      },
      async discard(model, version, session) {
        const token = tokens.get(session);
        if (token !== undefined) await call('discard', { model, version, token });
      },
    },
    health: {
      isFaulted: (model) => faulted.has(model),
      async fault(model, version, code, message) {
        // At once, as in process: this feeder's next batches of the model go back unclaimed while main pauses every feeder.
        faulted.add(model);
        await call('fault', { model, version, code, message });
      },
    },
    status: {
      batchStarted: (batchId, model, size) => note({ type: 'batch-started', batchId, model, size }),
      batchEnded: (batchId, stats) => note({ type: 'batch-ended', batchId, stats }),
      adaptiveBatching: (state) => note({ type: 'adaptive-batching', state }),
      setModelsServed: (models) => note({ type: 'models-served', models }),
    },
    metrics: {
      batchStarted: (jobs) => note({ type: 'metric-batch-started', jobs: measured(jobs) }),
      batchRan: (model, size, inferMs) => note({ type: 'metric-batch-ran', model, size, inferMs }),
      jobsFinished: (jobs, outcome) => note({ type: 'metric-jobs-finished', jobs: measured(jobs), outcome }),
      jobsReleased: (jobs) => note({ type: 'metric-jobs-released', jobs: measured(jobs) }),
      jobsRecordLost: (model, count) => note({ type: 'metric-jobs-record-lost', model, count }),
      modelFaulted: (model, isFaulted) => note({ type: 'metric-model-faulted', model, faulted: isFaulted }),
    },
  };

  return {
    host,
    serve(c) {
      controls = c;
      if (closeBeforeServe) {
        const m = closeBeforeServe;
        void control(m);
      }
    },
    started: () => note({ type: 'started' }),
  };
}
