import { publishWorkerStatus, type RedisClient } from '@inferq/queue';

type WorkerStatus = Parameters<typeof publishWorkerStatus>[2];

/** The status a live worker publishes, serving `modelsServed` and idle; `overrides` set the rest. */
export function fakeWorkerStatus(workerId: string, modelsServed: string[], overrides: Partial<WorkerStatus> = {}): WorkerStatus {
  const now = new Date().toISOString();
  return {
    workerId,
    hostname: 'h',
    device: 'cpu',
    pid: 1,
    startedAt: now,
    lastHeartbeatAt: now,
    modelsServed,
    modelsLoaded: [],
    currentBatch: null,
    jobsSucceeded: 0,
    jobsFailed: 0,
    batches: 0,
    gpu: null,
    ...overrides,
  };
}

/**
 * Registers a worker that is not there: the API then takes submits for its models (a model no worker serves answers
 * 503), while the test plays the worker's part itself. Lives `ttlMs`; returns the status published.
 */
export async function publishFakeWorker(redis: RedisClient, prefix: string, workerId: string, modelsServed: string[], ttlMs = 600_000): Promise<WorkerStatus> {
  const status = fakeWorkerStatus(workerId, modelsServed);
  await publishWorkerStatus(redis, prefix, status, ttlMs);
  return status;
}
