import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { requiredTestVar } from '@inferq/test-utils';
import { createJobProducer, createRedisConnection, PRODUCER_COMMAND_TIMEOUT_MS, writeOutcomeUnknown, type RedisClient } from '../src/index.ts';

// A producer whose link to Redis goes silent (a partition: no reset, no
// error), through a relay that can stop forwarding. Promise: the call in
// flight fails after the command timeout as "outcome unknown"; the connection
// then reconnects, and calls meanwhile fail at once, sent nowhere.

let relay: Server;
let frozen = false;
const sockets = new Set<Socket>();
let producerRedis: RedisClient;

beforeAll(async () => {
  const target = new URL(requiredTestVar('REDIS_URL'));
  relay = createServer((client) => {
    const upstream = connect(Number(target.port || 6379), target.hostname);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
      s.on('close', () => sockets.delete(s));
    }
    client.on('data', (d) => void (frozen || upstream.write(d)));
    upstream.on('data', (d) => void (frozen || client.write(d)));
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  const { port } = relay.address() as { port: number };
  producerRedis = createRedisConnection(`redis://127.0.0.1:${port}`, 'producer');
  producerRedis.on('error', () => {});
  await new Promise((resolve) => producerRedis.once('ready', resolve));
});
afterAll(async () => {
  producerRedis?.disconnect();
  for (const s of sockets) s.destroy();
  await new Promise((resolve) => relay?.close(resolve));
});

describe('a producer on a link that goes silent', () => {
  it('times out the call in flight as "outcome unknown", then fails fast with nothing sent until it is back', async () => {
    const producer = createJobProducer({ connection: producerRedis, prefix: `silent${process.pid}` });
    expect(await producer.backlog('mlp')).toBe(0);
    frozen = true;
    const started = performance.now();
    const timedOut = await producer.backlog('mlp').catch((e: unknown) => e);
    expect(performance.now() - started).toBeGreaterThanOrEqual(PRODUCER_COMMAND_TIMEOUT_MS - 50);
    expect(writeOutcomeUnknown(timedOut)).toBe(true);

    const fastStarted = performance.now();
    const refused = await producer.backlog('mlp').catch((e: unknown) => e);
    expect(performance.now() - fastStarted).toBeLessThan(PRODUCER_COMMAND_TIMEOUT_MS / 2);
    expect(writeOutcomeUnknown(refused)).toBe(false);

    frozen = false;
    for (const s of sockets) s.destroy(); // the partition heals; the stuck sockets are gone
    await new Promise((resolve) => producerRedis.once('ready', resolve));
    expect(await producer.backlog('mlp')).toBe(0);
    await producer.close();
  });
});
