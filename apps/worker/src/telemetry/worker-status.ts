import { hostname } from 'node:os';
import type { AdaptiveBatching, ModelEvent, WorkerFault, WorkerStatus } from '@inferq/contracts';
import type { BatchStats } from './batch-stats.ts';

type LoadedModel = WorkerStatus['modelsLoaded'][number];
type CurrentBatch = NonNullable<WorkerStatus['currentBatch']>;

/** Model events a heartbeat carries: enough to see a load/unload cycle, small enough to send every beat. */
export const MODEL_EVENTS_KEPT = 20;

/**
 * What this worker process reports in its heartbeat: counters fed by the batch
 * runner, the batches in flight, the models it serves and has loaded, and
 * its last model loads, warm-ups and unloads.
 */
export function createWorkerStatus(init: { workerId: string; device: string }) {
  const startedAt = new Date().toISOString();
  const counters = { jobsSucceeded: 0, jobsFailed: 0, batches: 0 };
  const running = new Map<string, CurrentBatch>();
  let modelsServed: string[] = [];
  const modelEvents: ModelEvent[] = [];
  const adaptive = new Map<string, AdaptiveBatching>();

  return {
    batchStarted(batchId: string, model: string, size: number): void {
      running.set(batchId, { model, size, startedAt: new Date().toISOString() });
    },
    batchEnded(batchId: string, stats?: BatchStats): void {
      running.delete(batchId);
      if (!stats) return;
      counters.batches++;
      counters.jobsSucceeded += stats.succeeded;
      counters.jobsFailed += stats.failed;
    },
    setModelsServed(models: string[]): void {
      modelsServed = models;
    },
    /** An `auto` model's measured curve and current choice. */
    adaptiveBatching(state: AdaptiveBatching): void {
      adaptive.set(state.model, state);
    },
    modelEvent(event: ModelEvent): void {
      modelEvents.push(event);
      if (modelEvents.length > MODEL_EVENTS_KEPT) modelEvents.splice(0, modelEvents.length - MODEL_EVENTS_KEPT);
    },
    snapshot(modelsLoaded: LoadedModel[], gpu: WorkerStatus['gpu'], faults: WorkerFault[] = []): WorkerStatus {
      return {
        workerId: init.workerId,
        hostname: hostname(),
        device: init.device,
        pid: process.pid,
        startedAt,
        lastHeartbeatAt: new Date().toISOString(),
        modelsServed,
        modelsLoaded,
        modelEvents: [...modelEvents],
        currentBatch: running.values().next().value ?? null,
        ...counters,
        gpu,
        ready: faults.length === 0,
        faults,
        ...(adaptive.size > 0 ? { adaptiveBatching: [...adaptive.values()] } : {}),
      };
    },
  };
}
export type WorkerStatusTracker = ReturnType<typeof createWorkerStatus>;
