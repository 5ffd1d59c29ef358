import type { WorkerStatus } from '@inferq/contracts';
import type { RedisClient } from '../connection/connection.ts';
import { workerRegistryKey as registryKey } from '../names.ts';

// Worker heartbeats live in one Redis hash per deployment, a field per worker,
// so listing them is one HGETALL however many queue keys Redis holds. An entry
// carries its own expiry; readers skip and prune the stale ones.

interface Entry {
  status: WorkerStatus;
  expiresAtMs: number;
}

/** Writes (or refreshes) a worker's status; it counts as live for `ttlMs`. */
export async function publishWorkerStatus(redis: RedisClient, prefix: string, status: WorkerStatus, ttlMs: number): Promise<void> {
  const entry: Entry = { status, expiresAtMs: Date.now() + ttlMs };
  await redis.hset(registryKey(prefix), status.workerId, JSON.stringify(entry));
}

export async function removeWorkerStatus(redis: RedisClient, prefix: string, workerId: string): Promise<void> {
  await redis.hdel(registryKey(prefix), workerId);
}

/** Live workers, by worker id; entries of workers that stopped beating are removed. */
export async function listWorkerStatuses(redis: RedisClient, prefix: string): Promise<WorkerStatus[]> {
  const fields = await redis.hgetall(registryKey(prefix));
  const now = Date.now();
  const live: WorkerStatus[] = [];
  const stale: string[] = [];
  for (const [workerId, json] of Object.entries(fields)) {
    const entry = parseEntry(json);
    if (entry && entry.expiresAtMs > now) live.push(entry.status);
    else stale.push(workerId);
  }
  if (stale.length > 0) await redis.hdel(registryKey(prefix), ...stale);
  return live.sort((a, b) => a.workerId.localeCompare(b.workerId));
}

/** Models at least one live worker consumes. */
export async function listServedModels(redis: RedisClient, prefix: string): Promise<Set<string>> {
  return new Set((await listWorkerStatuses(redis, prefix)).flatMap((w) => w.modelsServed));
}

function parseEntry(json: string): Entry | undefined {
  try {
    const entry = JSON.parse(json) as Entry;
    return typeof entry.expiresAtMs === 'number' && entry.status ? entry : undefined;
  } catch {
    return undefined;
  }
}
