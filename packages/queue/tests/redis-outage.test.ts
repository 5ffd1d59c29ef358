import { afterEach, describe, expect, it } from 'vitest';
import { requiredTestVar, waitFor } from '@inferq/test-utils';
import { createRedisConnection, explainRedisError, isRedisOutageError, waitForReady, watchRedisOutages, type RedisClient } from '../src/index.ts';

// An outage of the primary, as the logs and metrics tell it: one warning when it is lost, one info line with its
// length when writes are accepted again, what comes in between at debug with its meaning.

const recorder = () => {
  const lines: Array<{ level: 'warn' | 'info' | 'debug'; message: string; fields: Record<string, unknown> }> = [];
  const at = (level: 'warn' | 'info' | 'debug') => (fields: object, message: string) =>
    lines.push({ level, message, fields: fields as Record<string, unknown> });
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug') } };
};

describe('explainRedisError', () => {
  it('names what the drivers report during a failover, and leaves the rest as they are', () => {
    const kinds = [
      'All sentinels are unreachable. Retrying from scratch after 200ms. Last error: Connection is closed.',
      "READONLY You can't write against a read only replica.",
      'CLUSTERDOWN The cluster is down',
      'Missing key for job {infer.mlp}:0190. moveToFinished',
      'Missing lock for job 0190. moveToFinished',
      'connect ECONNREFUSED 127.0.0.1:6390',
      'Command timed out',
      "Stream isn't writeable and enableOfflineQueue options is false",
      // A client's own refusals while its connection is not ready (QueueNotReadyError), a failover's closing connection among them.
      'redis connection is disconnecting',
      'redis connection is connect',
      'ERR unknown command',
    ].map((m) => explainRedisError(new Error(m)).kind);
    expect(kinds).toEqual([
      'no-primary-named',
      'demoted',
      'shard-down',
      'job-entry-lost',
      'job-entry-lost',
      'unreachable',
      'unreachable',
      'unreachable',
      'unreachable',
      'unreachable',
      'other',
    ]);
  });
});

describe('watchRedisOutages on a connection whose link drops', () => {
  const open: RedisClient[] = [];
  afterEach(() => {
    for (const c of open.splice(0)) c.disconnect();
  });

  it('warns once when the primary is lost, tells the outage once it is back, and keeps the rest at debug', async () => {
    const url = requiredTestVar('REDIS_URL');
    const client = createRedisConnection(url, 'producer');
    const admin = createRedisConnection(url, 'producer');
    open.push(client, admin);
    const { lines, logger } = recorder();
    const changes: Array<[boolean, number | undefined]> = [];
    const watch = watchRedisOutages(client, { connection: 'producer', logger, onChange: (up, ms) => changes.push([up, ms]) });
    expect((await waitForReady(client, 5_000)) && (await waitForReady(admin, 5_000))).toBe(true);
    const id = await client.client('ID');
    await admin.client('KILL', 'ID', String(id));
    // A command while it reconnects fails at once (no offline queue): the outage is already on, so a debug line.
    await client.ping().catch(() => undefined);
    await waitFor(async () => changes.length === 2, { timeoutMs: 10_000, what: 'the outage to end' });
    expect(changes[0]).toEqual([false, undefined]);
    expect(changes[1]![0]).toBe(true);
    expect(changes[1]![1]).toBeGreaterThanOrEqual(0);
    expect(watch.downSince).toBeUndefined();
    const told = lines.filter((l) => l.level !== 'debug');
    expect(told.map((l) => l.level)).toEqual(['warn', 'info']);
    expect(told[0]!.message).toMatch(/^redis primary lost/);
    expect(told[1]!.message).toMatch(/^redis accepting writes again after \d+\.\d s$/);
    expect(told[1]!.fields).toMatchObject({ connection: 'producer', outageMs: changes[1]![1] });
    expect(await client.ping()).toBe('PONG');
  });

  it('is told by a command that found no primary, and ends at an answer a second after the last failure', async () => {
    const { lines, logger } = recorder();
    const client = createRedisConnection(requiredTestVar('REDIS_URL'), 'producer');
    open.push(client);
    const changes: boolean[] = [];
    let clock = 1_000_000;
    watchRedisOutages(client, { connection: 'producer', logger, onChange: (up) => changes.push(up), now: () => clock });
    expect(await waitForReady(client, 5_000)).toBe(true);
    // What a command's failure says when Redis cannot be reached; the connection itself stays up here.
    expect(isRedisOutageError(new Error('connect ECONNREFUSED 127.0.0.1:6390'))).toBe(false); // no outage on: maybe Postgres's
    await client.eval("return redis.error_reply('CLUSTERDOWN The cluster is down')", 0).catch(() => undefined);
    expect(changes).toEqual([false]);
    expect(isRedisOutageError(new Error('connect ECONNREFUSED 127.0.0.1:6390'))).toBe(true);
    expect(isRedisOutageError(new Error('relation "jobs" does not exist'))).toBe(false);
    // An answer right after a failure may come from another shard: the outage goes on until a second without failures.
    await client.ping();
    expect(changes).toEqual([false]);
    clock += 1_000;
    await client.ping();
    expect(changes).toEqual([false, true]);
    expect(isRedisOutageError(new Error('connect ECONNREFUSED 127.0.0.1:6390'))).toBe(false);
    expect(lines.filter((l) => l.level === 'warn')).toHaveLength(1);
  });

  it('says nothing when the process closes the connection itself, a command still waiting', async () => {
    const { lines, logger } = recorder();
    const client = createRedisConnection(requiredTestVar('REDIS_URL'), 'consumer');
    const changes: boolean[] = [];
    watchRedisOutages(client, { connection: 'consumer', logger, onChange: (up) => changes.push(up) });
    expect(await waitForReady(client, 5_000)).toBe(true);
    const waiting = client.blpop(`inferq-test-nothing-${Date.now()}`, 5).catch((err: Error) => err.message);
    await new Promise((resolve) => setTimeout(resolve, 100)); // the BLPOP is on the server
    client.disconnect();
    expect(await waiting).toMatch(/Connection is closed/);
    expect(changes).toEqual([]);
    expect(lines.filter((l) => l.level !== 'debug')).toEqual([]);
  });
});
