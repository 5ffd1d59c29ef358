import { findModel, type ModelRecord, type Pool } from '@inferq/db';
import type { Logger } from '@inferq/core';
import { AppError } from '@inferq/core';
import type { ModelEvent, WorkerStatus } from '@inferq/contracts';
import { openModelSession, type ModelSession, type OpenModelSessionOptions, type ProviderPairingPolicy } from '@inferq/inference';
import type { ModelCache } from './model-cache.ts';
import { warmUpSession } from './model-warmup.ts';
import { estimateSessionBytes, pickEvictions } from './session-budget.ts';
import type { WorkerMetrics } from '../telemetry/worker-metrics.ts';

interface SessionSettings {
  device: string;
  providers: string[] | undefined;
  intraOpNumThreads: number;
  interOpNumThreads: number;
  /** @default 'same-release' (CUDA_PROVIDER_PAIRING) */
  providerPairing?: ProviderPairingPolicy | undefined;
}

export interface SessionLifecycle {
  /** One run on zero-filled inputs right after each load. @default true */
  warmup: boolean;
  /** Unload a session after this long without a batch; 0: never. @default 0 */
  idleUnloadMs: number;
  /** Estimated bytes all sessions may hold (see session-budget.ts); 0: no limit. @default 0 */
  memoryBudgetBytes: number;
}

type LoadedModel = WorkerStatus['modelsLoaded'][number];
type UnloadReason = NonNullable<ModelEvent['reason']>;

interface Entry {
  model: string;
  version: number;
  ready: Promise<ModelSession>;
  /** Set once loaded (and warmed). */
  session?: ModelSession;
  loadedAt?: string;
  estimatedBytes: number;
  /** Batches holding the session: from getSession until their run settles. Never unloaded while above 0. */
  inFlight: number;
  lastUsedMs: number;
}

export interface ModelSessionsDeps {
  pool: Pool;
  cache: ModelCache;
  settings: SessionSettings;
  logger: Logger;
  metrics?: Pick<WorkerMetrics, 'modelLoaded' | 'modelWarmed'>;
  lifecycle?: Partial<SessionLifecycle>;
  /** Each load, warm-up and unload, for the worker's published status. */
  onEvent?: (event: ModelEvent) => void;
  /** Test seams: the registry lookup (no version: the latest), the session opener and the clock. */
  findModel?: (model: string, version?: number) => Promise<ModelRecord | undefined>;
  openSession?: (options: OpenModelSessionOptions) => Promise<ModelSession>;
  nowMs?: () => number;
}

const roundMs = (ms: number): number => Math.round(ms * 10) / 10;

/**
 * One onnxruntime session per model version, loaded on first use (or at
 * start, `preload`), warmed with one zero-filled run, and unloaded when idle
 * too long or to make room under the memory budget; never while a batch holds
 * it. A failed load is not cached, so a later batch tries again.
 */
export function createModelSessions(deps: ModelSessionsDeps) {
  const lifecycle: SessionLifecycle = { warmup: true, idleUnloadMs: 0, memoryBudgetBytes: 0, ...deps.lifecycle };
  const lookup = deps.findModel ?? ((model: string, version?: number) => findModel(deps.pool, model, version));
  const open = deps.openSession ?? openModelSession;
  const now = deps.nowMs ?? Date.now;
  const entries = new Map<string, Entry>();
  const handles = new WeakMap<ModelSession, Entry>();
  const keyOf = (model: string, version: number) => `${model}:${version}`;
  const isIdle = (e: Entry) => e.session !== undefined && e.inFlight === 0;

  function emit(e: Entry, event: ModelEvent['event'], extra: { ms?: number; reason?: UnloadReason } = {}): void {
    deps.onEvent?.({ model: e.model, version: e.version, event, ...extra, at: new Date().toISOString() });
  }

  function openSession(path: string): Promise<ModelSession> {
    const { device, providers, intraOpNumThreads, interOpNumThreads, providerPairing } = deps.settings;
    return open({
      modelPath: path,
      device,
      providers,
      intraOpNumThreads: intraOpNumThreads || undefined,
      interOpNumThreads: interOpNumThreads || undefined,
      providerPairing,
    });
  }

  async function unload(key: string, reason: UnloadReason): Promise<void> {
    const e = entries.get(key);
    if (!e?.session || e.inFlight > 0) return;
    entries.delete(key);
    emit(e, 'unloaded', { reason });
    deps.logger.info({ model: e.model, modelVersion: e.version, reason, idleMs: now() - e.lastUsedMs }, 'model unloaded');
    await e.session.close().catch(() => {});
  }

  /** Unloads idle sessions, least recently used first, until `incoming` fits the budget; loads anyway when it cannot. */
  async function makeRoomFor(incoming: Entry): Promise<void> {
    if (lifecycle.memoryBudgetBytes <= 0) return;
    const others = [...entries]
      .filter(([, e]) => e !== incoming)
      .map(([key, e]) => ({ key, estimatedBytes: e.estimatedBytes, lastUsedMs: e.lastUsedMs, evictable: isIdle(e) }));
    const { keys, fits } = pickEvictions(others, incoming.estimatedBytes, lifecycle.memoryBudgetBytes);
    await Promise.all(keys.map((key) => unload(key, 'memory')));
    if (!fits) {
      const heldMb = [...entries.values()].filter((e) => e !== incoming).reduce((sum, e) => sum + e.estimatedBytes, 0) / 2 ** 20;
      deps.logger.warn(
        {
          model: incoming.model,
          modelVersion: incoming.version,
          estimatedMb: roundMs(incoming.estimatedBytes / 2 ** 20),
          heldMb: roundMs(heldMb),
          budgetMb: lifecycle.memoryBudgetBytes / 2 ** 20,
        },
        'model memory budget exceeded; loading anyway',
      );
    }
  }

  /** Warms a fresh session; a warm-up that kills the session thread costs a reopen, never the load. */
  async function warmUp(e: Entry, session: ModelSession, record: ModelRecord, path: string): Promise<ModelSession> {
    const log = deps.logger.child({ model: e.model, modelVersion: e.version });
    const outcome = await warmUpSession(session, record.signature);
    switch (outcome.status) {
      case 'warmed':
        log.info({ warmupMs: roundMs(outcome.ms) }, 'model warmed');
        deps.metrics?.modelWarmed(e.model, outcome.ms / 1000);
        emit(e, 'warmed', { ms: roundMs(outcome.ms) });
        return session;
      case 'skipped':
        log.info({ reason: outcome.reason }, 'model warm-up skipped');
        return session;
      case 'run-failed':
        log.warn({ reason: outcome.reason, warmupMs: roundMs(outcome.ms) }, 'model warm-up run failed; serving it cold');
        return session;
      case 'session-failed':
        log.warn({ reason: outcome.reason }, 'model warm-up ended its session; reopening it without warm-up');
        await session.close().catch(() => {});
        return openSession(path);
    }
  }

  async function load(e: Entry): Promise<ModelSession> {
    const loadStarted = performance.now();
    const record = await lookup(e.model, e.version);
    if (!record) throw new AppError('MODEL_NOT_FOUND', `model ${e.model}:${e.version} is not registered`);
    e.estimatedBytes = estimateSessionBytes(record.sizeBytes);
    await makeRoomFor(e);
    const path = await deps.cache.ensureModelFile({ sha256: record.sha256, artifactKey: record.artifactKey });
    const started = performance.now();
    let session = await openSession(path);
    const loadMs = performance.now() - loadStarted;
    // A model that fell back (a GPU worker running it on the CPU) is worth a warning: it works, slowly.
    const fellBack = session.failedProviders.length > 0;
    deps.logger[fellBack ? 'warn' : 'info'](
      {
        model: e.model,
        modelVersion: e.version,
        provider: session.provider,
        failedProviders: session.failedProviders,
        // How a CUDA provider pairs with the core, and where the nodes ran (packages/inference: provider-pairing.ts, node-placement.ts).
        providerPairing: session.providerPairing,
        placement: session.placement,
        loadMs: Math.round(performance.now() - started),
      },
      fellBack ? `model loaded on ${session.provider} after other providers failed` : 'model loaded',
    );
    deps.metrics?.modelLoaded(e.model, loadMs / 1000);
    emit(e, 'loaded', { ms: roundMs(loadMs) });
    if (lifecycle.warmup) session = await warmUp(e, session, record, path);
    e.session = session;
    e.loadedAt = new Date().toISOString();
    e.lastUsedMs = now();
    return session;
  }

  function entryFor(model: string, version: number): Entry {
    const key = keyOf(model, version);
    let e = entries.get(key);
    if (!e) {
      const entry: Entry = { model, version, ready: undefined as unknown as Promise<ModelSession>, estimatedBytes: 0, inFlight: 0, lastUsedMs: now() };
      entry.ready = load(entry);
      entry.ready.catch(() => {
        if (entries.get(key) === entry) entries.delete(key);
      });
      entries.set(key, entry);
      e = entry;
    }
    return e;
  }

  /**
   * The batch's view of a shared session: it counts as in flight from
   * getSession until its run settles, so nothing unloads it in between.
   */
  function lease(e: Entry, session: ModelSession): ModelSession {
    let held = true;
    const handle: ModelSession = {
      provider: session.provider,
      failedProviders: session.failedProviders,
      inputNames: session.inputNames,
      outputNames: session.outputNames,
      async infer(jobs) {
        if (held) held = false;
        else e.inFlight++;
        try {
          return await session.infer(jobs);
        } finally {
          e.inFlight--;
          e.lastUsedMs = now();
        }
      },
      /** Gives back a lease that ran nothing; the shared session stays loaded. */
      async close() {
        if (!held) return;
        held = false;
        e.inFlight--;
      },
    };
    handles.set(handle, e);
    return handle;
  }

  return {
    /** The model version's session, loading it first if needed; the caller runs one batch on it. */
    async getSession(model: string, version: number): Promise<ModelSession> {
      for (;;) {
        const e = entryFor(model, version);
        const session = await e.ready;
        // Unloaded between its load finishing and this turn: load it again.
        if (entries.get(keyOf(model, version)) !== e) continue;
        e.inFlight++;
        e.lastUsedMs = now();
        return lease(e, session);
      }
    },
    /**
     * Loads (and warms) a model before any job asks for it; no version: the latest that is not retired. A retired
     * version is refused: no new job will ask for it. Resolves with the version loaded.
     */
    async preload(model: string, version?: number): Promise<number> {
      const record = await lookup(model, version);
      if (!record) throw new AppError('MODEL_NOT_FOUND', `model ${version === undefined ? model : `${model}:${version}`} is not registered`);
      if (record.retiredAt) throw new AppError('MODEL_VERSION_RETIRED', `model ${model}:${record.version} is retired`);
      await entryFor(model, record.version).ready;
      return record.version;
    },
    /** Loads a version now, retired or not: the fault probe's load, for jobs that are already queued. */
    async ensureLoaded(model: string, version: number): Promise<void> {
      await entryFor(model, version).ready;
    },
    /** Unloads the given versions where no batch holds them (retired versions with no job left). */
    async unloadVersions(versions: ReadonlyArray<{ model: string; version: number }>, reason: UnloadReason): Promise<void> {
      await Promise.all(versions.map((v) => unload(keyOf(v.model, v.version), reason)));
    },
    /**
     * Forgets a session whose thread died (infer rejected), so the next
     * batch loads the model afresh instead of failing on a dead thread.
     */
    async discard(model: string, version: number, session: ModelSession): Promise<void> {
      const key = keyOf(model, version);
      const e = handles.get(session);
      if (!e?.session || entries.get(key) !== e) return;
      entries.delete(key);
      emit(e, 'unloaded', { reason: 'thread-failed' });
      deps.logger.warn({ model, modelVersion: version }, 'model session discarded after its thread failed');
      await e.session.close().catch(() => {});
    },
    /** Unloads every session no batch has used for the idle time. */
    async unloadIdle(): Promise<void> {
      if (lifecycle.idleUnloadMs <= 0) return;
      const cutoffMs = now() - lifecycle.idleUnloadMs;
      const idle = [...entries].filter(([, e]) => isIdle(e) && e.lastUsedMs <= cutoffMs);
      await Promise.all(idle.map(([key]) => unload(key, 'idle')));
    },
    /** Sessions that finished loading, with the provider each ended on. */
    loaded: (): LoadedModel[] =>
      [...entries.values()].flatMap((e) =>
        e.session && e.loadedAt
          ? [{ model: e.model, version: e.version, provider: e.session.provider, loadedAt: e.loadedAt, lastUsedAt: new Date(e.lastUsedMs).toISOString() }]
          : [],
      ),
    async closeAll(): Promise<void> {
      const all = [...entries.values()];
      entries.clear();
      await Promise.all(all.map(async (e) => (await e.ready.catch(() => undefined))?.close()));
    },
  };
}
export type ModelSessions = ReturnType<typeof createModelSessions>;
