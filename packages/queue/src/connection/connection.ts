import { Cluster, Redis, type Command, type RedisOptions } from 'ioredis';
import { parseRedisUrl } from './redis-topology.ts';

/** A connection to whichever topology REDIS_URL names: one node or a Sentinel group's primary (Redis), or a Cluster. */
export type RedisClient = Redis | Cluster;

export type ConnectionRole = 'producer' | 'consumer';

const reconnectDelay = (attempt: number): number => Math.min(attempt * 200, 2_000);

/**
 * How long a producer waits for Redis to answer one command. A link that went
 * silent (a partition: no reset, no error) would otherwise hang every call
 * until TCP gives up, minutes later.
 */
export const PRODUCER_COMMAND_TIMEOUT_MS = 2_000;

/**
 * Redis connections for BullMQ, for any topology (redis-topology.ts).
 * Producers fail fast (no offline queue, one retry) so the API can answer 503
 * while Redis is down or failing over instead of hanging; consumers block and
 * retry forever, as BullMQ workers require. A node that turned replica under
 * us (READONLY after a failover) drops the connection, which reconnects to
 * the new primary.
 */
export function createRedisConnection(url: string, role: ConnectionRole): RedisClient {
  const client = connect(url, role);
  return role === 'producer' ? reconnectOnTimeout(client) : client;
}

function connect(url: string, role: ConnectionRole): RedisClient {
  const topology = parseRedisUrl(url);
  const options: RedisOptions =
    role === 'producer'
      ? { maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2_000, commandTimeout: PRODUCER_COMMAND_TIMEOUT_MS }
      : { maxRetriesPerRequest: null, enableOfflineQueue: true };
  const reconnectOnError = (err: Error): 2 | false => (err.message.startsWith('READONLY') ? 2 : false);
  switch (topology.kind) {
    case 'single':
      return new Redis(topology.url, { ...options, retryStrategy: reconnectDelay, reconnectOnError });
    case 'sentinel':
      return new Redis({
        ...options,
        ...topology.auth,
        sentinels: topology.sentinels,
        name: topology.group,
        db: topology.db,
        sentinelPassword: topology.sentinelPassword,
        // No failoverDetector: its +switch-master handler disconnects the connector even while it is connecting, which
        // ends the client for good (ioredis 5.11). A dead primary closes our connection and a demoted one answers
        // READONLY (reconnectOnError): either way the client asks the Sentinels for the new primary.
        sentinelRetryStrategy: reconnectDelay,
        retryStrategy: reconnectDelay,
        reconnectOnError,
        ...(topology.tls ? { tls: {}, enableTLSForSentinelMode: true } : {}),
      });
    case 'cluster': {
      const { maxRetriesPerRequest, enableOfflineQueue, connectTimeout, commandTimeout } = options;
      return new Cluster(topology.nodes, {
        enableOfflineQueue,
        redisOptions: { maxRetriesPerRequest, connectTimeout, commandTimeout, reconnectOnError, ...topology.auth, ...(topology.tls ? { tls: {} } : {}) },
        clusterRetryStrategy: reconnectDelay,
        // While a replica takes over a failed primary's slots, commands for them wait and retry instead of failing.
        retryDelayOnClusterDown: 200,
        retryDelayOnFailover: 200,
        retryDelayOnTryAgain: 200,
        slotsRefreshTimeout: 2_000,
      });
    }
  }
}

/**
 * A producer whose command timed out drops its connection and connects again:
 * until it is back, its calls fail at once (no offline queue), so the API
 * answers 503 in milliseconds instead of a timeout per request while the
 * link stays silent.
 */
function reconnectOnTimeout(client: RedisClient): RedisClient {
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  let resetting = false;
  client.sendCommand = ((command: Command, ...rest: unknown[]) => {
    command.promise.catch((err: unknown) => {
      // Only a connection that looks up can be silently stuck; one already reconnecting must be left to it
      // (a disconnect while it connects ends it for good).
      if (resetting || !isCommandTimeout(err) || client.status !== 'ready') return;
      resetting = true;
      client.once('ready', () => (resetting = false));
      client.disconnect(true);
    });
    return send(command, ...rest);
  }) as typeof client.sendCommand;
  return client;
}

const isCommandTimeout = (err: unknown): boolean => err instanceof Error && err.message === 'Command timed out';

/**
 * Whether a failed write may still have reached Redis: it was sent, and no
 * answer came (a timeout, a connection lost mid-call). A call refused before
 * sending (not connected: no offline queue) or answered with an error did not.
 */
export function writeOutcomeUnknown(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  if (err.name === 'ReplyError' || err instanceof QueueNotReadyError) return false;
  return !/enableOfflineQueue|Stream isn't writeable/.test(err.message);
}

/** The producer's connection is not up: nothing was sent. */
export class QueueNotReadyError extends Error {
  constructor(status: string) {
    super(`redis connection is ${status}`);
    this.name = 'QueueNotReadyError';
  }
}

/**
 * Waits up to `timeoutMs` for the connection to be ready; whether it is. Never rejects: not events.once, which rejects on
 * the first 'error' (a ready check that timed out on a busy Redis) although the connection retries by itself.
 */
export async function waitForReady(client: RedisClient, timeoutMs: number): Promise<boolean> {
  if (client.status === 'ready') return true;
  let onReady = (): void => {};
  let timer: NodeJS.Timeout | undefined;
  const ready = await Promise.race([
    new Promise<boolean>((resolve) => client.once('ready', (onReady = () => resolve(true)))),
    new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
  ]);
  client.off('ready', onReady);
  clearTimeout(timer);
  return ready;
}

/** The primaries behind a connection: the connection itself, or each master node of a Cluster (once its slots are known). */
export async function primariesOf(client: RedisClient): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  if (client.status !== 'ready') await new Promise<void>((resolve, reject) => client.once('ready', resolve).once('error', reject));
  return client.nodes('master');
}

/** Returns Redis's maxmemory-policy (the strictest of a Cluster's primaries); BullMQ needs `noeviction` or queue keys can vanish. */
export async function readMaxmemoryPolicy(client: RedisClient): Promise<string | undefined> {
  const policies = await Promise.all((await primariesOf(client)).map(async (node) => ((await node.config('GET', 'maxmemory-policy')) as string[])[1]));
  return policies.find((p) => p !== 'noeviction') ?? policies[0];
}

/** Removes every key under `prefix:` on every primary (UNLINK, a pipeline per scan page); returns how many. */
export async function deleteKeysWithPrefix(client: RedisClient, prefix: string): Promise<number> {
  let deleted = 0;
  for (const node of await primariesOf(client)) {
    for await (const keys of node.scanStream({ match: `${prefix}:*`, count: 1000 }) as AsyncIterable<string[]>) {
      if (keys.length === 0) continue;
      const pipeline = node.pipeline();
      for (const key of keys) pipeline.unlink(key);
      await pipeline.exec();
      deleted += keys.length;
    }
  }
  return deleted;
}

/** A connection of the same topology that waits for Redis (offline queue, no retry limit): for blocking readers such as queue events. */
export function duplicateForBlocking(client: RedisClient): RedisClient {
  if (client instanceof Cluster)
    return client.duplicate(undefined, { enableOfflineQueue: true, redisOptions: { ...client.options.redisOptions, maxRetriesPerRequest: null } });
  return client.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
}
