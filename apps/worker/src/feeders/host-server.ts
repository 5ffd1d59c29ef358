import { listBuffers, postWithTransfer, type ModelSession } from '@inferq/inference';
import type { FeederHost } from './feeder.ts';
import {
  fromWireError,
  toWireError,
  type FeederMessage,
  type FeederNote,
  type FeederPort,
  type HostCall,
  type HostCallResults,
  type HostReply,
  type LentSession,
} from './feeder-protocol.ts';
import { createPendingCalls } from './pending-calls.ts';

/** Main's hold on one feeder thread, over its port. */
export interface FeederLink {
  /** Resolves once the feeder has started (its first model refresh is done); rejects if it is lost before. */
  started: Promise<void>;
  /** Tells the feeder a model's health changed: it mirrors it and pauses or resumes the model's consumer. Resolves once it has. */
  setHealth(model: string, faulted: boolean): Promise<void>;
  /** Asks the feeder to drain and close its connections; resolves once it has. */
  close(): Promise<void>;
  /** The feeder is gone: what it asked is dropped unanswered, the sessions lent to it go back, calls to it reject. */
  lost(err: Error): void;
}

type Answer<K extends HostCall['type']> = { value: HostCallResults[K]; transfer?: ArrayBuffer[] };

/**
 * Main's end of a feeder thread's port (host-proxy.ts is the other): answers its calls with the device's objects in
 * `host`, and feeds its status and metrics notes to them. A session lent for a batch is kept by token until its run
 * succeeds, or, after a failed run, until the feeder discards it, so a discard names the very session that failed.
 */
export function serveFeeder(port: FeederPort, host: FeederHost): FeederLink {
  const calls = createPendingCalls();
  const lent = new Map<number, { model: string; version: number; session: ModelSession }>();
  let nextToken = 1;
  let gone = false;
  let markStarted!: { resolve: () => void; reject: (err: Error) => void };
  const started = new Promise<void>((resolve, reject) => (markStarted = { resolve, reject }));
  // Awaited at start only; a feeder lost later must not leave it rejected unheard.
  started.catch(() => {});

  function lentSession(token: number) {
    const held = lent.get(token);
    if (!held) throw new Error(`no session lent under token ${token}`);
    return held;
  }

  async function answer(c: HostCall): Promise<Answer<HostCall['type']>> {
    switch (c.type) {
      case 'get-session': {
        const session = await host.sessions.getSession(c.model, c.version);
        // Asked by a feeder that died meanwhile: the lease goes back at once.
        if (gone) {
          await session.close();
          throw new Error('the feeder is gone');
        }
        const token = nextToken++;
        lent.set(token, { model: c.model, version: c.version, session });
        const { provider, failedProviders, providerPairing, placement, inputNames, outputNames } = session;
        const value: LentSession = { token, provider, failedProviders, providerPairing, placement, inputNames, outputNames };
        return { value };
      }
      case 'infer': {
        const result = await lentSession(c.token).session.infer(c.jobs);
        // Ran: the feeder needs it no more (a failed run keeps it, for the feeder's discard).
        lent.delete(c.token);
        return { value: result, transfer: listBuffers(result.results.flatMap((r) => (r.ok ? r.outputs : []))) };
      }
      case 'discard': {
        const held = lent.get(c.token);
        lent.delete(c.token);
        if (held) await host.sessions.discard(c.model, c.version, held.session);
        return { value: undefined };
      }
      case 'release': {
        const held = lent.get(c.token);
        lent.delete(c.token);
        await held?.session.close();
        return { value: undefined };
      }
      case 'fault':
        await host.health.fault(c.model, c.version, c.code, c.message);
        return { value: undefined };
    }
  }

  async function reply(c: HostCall): Promise<void> {
    let message: HostReply;
    let transfer: ArrayBuffer[] = [];
    try {
      const a = await answer(c);
      message = { type: 'reply', id: c.id, ok: true, value: a.value };
      transfer = a.transfer ?? [];
    } catch (err) {
      message = { type: 'reply', id: c.id, ok: false, error: toWireError(err) };
    }
    if (!gone) postWithTransfer(port, message, transfer);
  }

  function take(n: FeederNote): void {
    switch (n.type) {
      case 'batch-started':
        return host.status.batchStarted(n.batchId, n.model, n.size);
      case 'batch-ended':
        return host.status.batchEnded(n.batchId, n.stats);
      case 'adaptive-batching':
        return host.status.adaptiveBatching(n.state);
      case 'models-served':
        return host.status.setModelsServed(n.models);
      case 'metric-batch-started':
        return host.metrics.batchStarted(n.jobs);
      case 'metric-batch-ran':
        return host.metrics.batchRan(n.model, n.size, n.inferMs);
      case 'metric-jobs-finished':
        return host.metrics.jobsFinished(n.jobs, n.outcome);
      case 'metric-jobs-released':
        return host.metrics.jobsReleased(n.jobs);
      case 'metric-jobs-record-lost':
        return host.metrics.jobsRecordLost(n.model, n.count);
      case 'metric-model-faulted':
        return host.metrics.modelFaulted(n.model, n.faulted);
      case 'started':
        return markStarted.resolve();
    }
  }

  port.on('message', (m: FeederMessage) => {
    if (gone) return;
    switch (m.type) {
      case 'done':
        return calls.settle(m.id, m.error ? { ok: false, error: fromWireError(m.error) } : { ok: true, value: undefined });
      case 'get-session':
      case 'infer':
      case 'discard':
      case 'release':
      case 'fault':
        return void reply(m);
      default:
        return take(m);
    }
  });

  return {
    started,
    setHealth: (model, faulted) => calls.call((id) => port.postMessage({ type: 'model-health', id, model, faulted })),
    close: () => calls.call((id) => port.postMessage({ type: 'close', id })),
    lost(err) {
      if (gone) return;
      gone = true;
      markStarted.reject(err);
      calls.failAll(err);
      // A lease whose run is under way ends with its run; one not run yet goes back now.
      for (const held of lent.values()) void held.session.close().catch(() => {});
      lent.clear();
    },
  };
}
