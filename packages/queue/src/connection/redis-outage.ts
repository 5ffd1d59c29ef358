import type { Cluster, Command } from 'ioredis';
import type { RedisClient } from './connection.ts';

/**
 * What a Redis or BullMQ error met during a failover means. The drivers report
 * a failover as a stream of errors that read like an incident or like data
 * loss; each kind here is explained once in docs/operations.md
 * ("Redis failover, as the logs tell it").
 */
export type RedisErrorKind = 'unreachable' | 'no-primary-named' | 'demoted' | 'shard-down' | 'job-entry-lost' | 'other';

/** Errors any network client meets: a Redis outage's only while one is on (else perhaps Postgres's or S3's). */
const NETWORK_ERRORS = /ECONNREFUSED|ECONNRESET|EHOSTUNREACH|ENETUNREACH|ETIMEDOUT|EPIPE/;

const KINDS: ReadonlyArray<[RegExp, RedisErrorKind, string]> = [
  [
    /All sentinels are unreachable/,
    'no-primary-named',
    'no Sentinel named a primary that answers yet: a failover is in progress (the Sentinels may all be up)',
  ],
  [/^READONLY/, 'demoted', 'the node written to became a replica: the connection moves to the new primary'],
  [
    /CLUSTERDOWN|TRYAGAIN|Failed to refresh slots cache|Too many Cluster redirections|None of startup nodes is available/,
    'shard-down',
    "a Cluster shard has no primary while its replica is promoted: its slots' commands wait and retry",
  ],
  [
    /Missing (key|lock) for job|Lock mismatch for job/,
    'job-entry-lost',
    "a job's queue entry or lock was lost with the old primary: the reconciler enqueues the job again from Postgres, and the attempt's completion is fenced",
  ],
  [
    new RegExp(
      [
        NETWORK_ERRORS.source,
        "Connection is closed|Command timed out|Stream isn't writeable|enableOfflineQueue|max retries per request",
        'connection is (connecting|connect|reconnecting|disconnecting|close|end|wait)$',
      ].join('|'),
    ),
    'unreachable',
    'the primary does not answer',
  ],
];

/** The kind of a Redis or BullMQ error, and what it means for the jobs (for the log line). */
export function explainRedisError(err: Error): { kind: RedisErrorKind; meaning: string } {
  for (const [pattern, kind, meaning] of KINDS) if (pattern.test(err.message)) return { kind, meaning };
  return { kind: 'other', meaning: err.message };
}

export interface OutageLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

export interface RedisOutageWatch {
  /** Since when writes have failed (ms since the epoch); undefined while they are accepted. */
  readonly downSince: number | undefined;
}

export interface RedisOutageOptions {
  /** Which connection, in the log lines and metrics (`producer`, `consumer`). */
  connection: string;
  logger: OutageLogger;
  /** Told when an outage starts (`up` false) and when it ends (`up` true, with its length). */
  onChange?(up: boolean, outageMs?: number): void;
  /** Told of each error the connection reports, by kind (a metric's label). */
  onError?(kind: RedisErrorKind): void;
  now?: () => number;
}

/** How long after the last failed command an answered one ends an outage that no node or reconnect accounts for. */
const QUIET_MS = 1_000;

/** Whether an error of this kind says the primary cannot take writes now. */
const isOutage = (kind: RedisErrorKind) => kind !== 'job-entry-lost' && kind !== 'other';

/** The watches of this process whose connection is in an outage now. */
const down = new Set<object>();

/**
 * An error a Redis outage explains (told once by its connection's watch): a periodic duty's failure to keep at debug.
 * The drivers' own messages always are; a bare network error only while one of this process's watched connections is
 * in an outage.
 */
export const isRedisOutageError = (err: Error): boolean => explainRedisError(err).kind !== 'other' && (down.size > 0 || !NETWORK_ERRORS.test(err.message));

/**
 * Follows one Redis connection through outages and failovers, and says so
 * once each way: one warning when the primary is lost, one info line with the
 * outage's length when writes are accepted again. What the driver reports in
 * between is logged at debug with what it means; an error of no known kind
 * is a warning each time, as before. Every command's outcome counts too (a
 * producer fails fast without an 'error' event, and a Cluster stays "ready"
 * while one shard fails over): a failure that says the primary is gone starts
 * an outage (once the connection has been ready: not a command sent while it
 * first connects), and an answer with no failure in the second before it ends
 * it; a reconnect that is ready again ends it at once. A Cluster's outage
 * started by a failed node ends once a slots refresh no longer names that
 * node a primary: an answer from another shard does not end it.
 */
export function watchRedisOutages(client: RedisClient, o: RedisOutageOptions): RedisOutageWatch {
  const now = o.now ?? Date.now;
  let downSince: number | undefined;
  const watch: RedisOutageWatch = {
    get downSince() {
      return downSince;
    },
  };
  let lastFailureAt = 0;
  let connected = client.status === 'ready';
  /** A Cluster's failed nodes ("host:port") while an outage is on. */
  const failedNodes = new Set<string>();

  /** Set once the process closes the connection itself: what fails after that is no outage. */
  let closing = false;
  for (const method of ['quit', 'disconnect'] as const) {
    const close = (client[method] as (...args: unknown[]) => unknown).bind(client);
    (client as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
      closing = true;
      return close(...args);
    };
  }

  const failed = (err: Error, node?: string) => {
    if (closing) return;
    const { kind, meaning } = explainRedisError(err);
    o.onError?.(kind);
    if (kind === 'other') return o.logger.warn({ connection: o.connection, node, err: err.message }, 'redis connection error');
    if (node !== undefined) failedNodes.add(node);
    if (isOutage(kind)) lastFailureAt = now();
    if (downSince !== undefined || !isOutage(kind)) return o.logger.debug({ connection: o.connection, kind, node, err: err.message }, meaning);
    downSince = now();
    down.add(watch);
    o.logger.warn(
      { connection: o.connection, kind, node, err: err.message },
      `redis primary lost (${meaning}): writes fail until a primary takes them, and submits answer 503 QUEUE_UNAVAILABLE`,
    );
    o.onChange?.(false);
  };
  const answered = () => {
    if (downSince === undefined) return;
    const outageMs = now() - downSince;
    downSince = undefined;
    down.delete(watch);
    failedNodes.clear();
    o.logger.info({ connection: o.connection, outageMs }, `redis accepting writes again after ${(outageMs / 1000).toFixed(1)} s`);
    o.onChange?.(true, outageMs);
  };

  client.on('error', (err: Error) => failed(err));
  client.on('ready', () => (connected = true));
  const cluster = 'isCluster' in client && client.isCluster ? (client as Cluster) : undefined;
  if (cluster) {
    cluster.on('node error', (err: Error, node: string) => failed(err, node));
    cluster.on('refresh', () => {
      if (downSince === undefined || failedNodes.size === 0) return;
      const primaries = new Set(cluster.nodes('master').map((n) => `${n.options.host}:${n.options.port}`));
      if ([...failedNodes].every((node) => !primaries.has(node))) answered();
    });
  } else {
    client.on('reconnecting', () => failed(new Error('Connection is closed')));
    client.on('ready', answered);
  }
  const send = client.sendCommand.bind(client) as (command: Command, ...rest: unknown[]) => unknown;
  client.sendCommand = ((command: Command, ...rest: unknown[]) => {
    command.promise.then(
      () => {
        if (downSince !== undefined && failedNodes.size === 0 && now() - lastFailureAt >= QUIET_MS) answered();
      },
      (err: unknown) => {
        if (connected && err instanceof Error && isOutage(explainRedisError(err).kind)) failed(err);
      },
    );
    return send(command, ...rest);
  }) as typeof client.sendCommand;
  return watch;
}
