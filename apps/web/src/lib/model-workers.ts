import type { AdaptiveBatching, ModelEvent, WorkerStatus } from '@inferq/contracts';

type LoadedModel = WorkerStatus['modelsLoaded'][number];

/** Each (worker, loaded version) of model `name`, from the workers' last heartbeats. */
export const findModelLoads = (workers: readonly WorkerStatus[], name: string): Array<{ worker: WorkerStatus; loaded: LoadedModel }> =>
  workers.flatMap((worker) => worker.modelsLoaded.filter((l) => l.model === name).map((loaded) => ({ worker, loaded })));

/** The loads, warm-ups and unloads of model `name` on every worker, newest first. */
export const findModelEvents = (workers: readonly WorkerStatus[], name: string): Array<{ workerId: string; event: ModelEvent }> =>
  workers
    .flatMap((worker) => (worker.modelEvents ?? []).filter((e) => e.model === name).map((event) => ({ workerId: worker.workerId, event })))
    .sort((a, b) => b.event.at.localeCompare(a.event.at));

/** Each worker's adaptive batching state for model `name` (`batching: "auto"`), from the workers' last heartbeats. */
export const findAdaptiveBatching = (workers: readonly WorkerStatus[], name: string): Array<{ worker: WorkerStatus; adaptive: AdaptiveBatching }> =>
  workers.flatMap((worker) => (worker.adaptiveBatching ?? []).filter((a) => a.model === name).map((adaptive) => ({ worker, adaptive })));
