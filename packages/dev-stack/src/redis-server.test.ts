import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from './redis-server.ts';
import type { RunningService } from './running-service.ts';

/** Sends RESP commands on one connection and returns the raw reply text once `expectedReplies` lines arrived. */
function sendCommands(url: string, commands: string[][], expectedReplies: number): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let reply = '';
    socket.once('error', reject);
    socket.on('data', (chunk) => {
      reply += chunk.toString();
      if (reply.split('\r\n').filter(Boolean).length >= expectedReplies) {
        socket.destroy();
        resolve(reply);
      }
    });
    const encode = (args: string[]) => `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join('')}`;
    socket.write(commands.map(encode).join(''));
  });
}

describe('startRedisServer', () => {
  let dir: string;
  let redis: RunningService;
  let startMs: number;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-redis-'));
    const t0 = performance.now();
    redis = await startRedisServer({ dataDir: dir });
    startMs = performance.now() - t0;
    console.log(`embedded Redis started in ${Math.round(startMs)} ms`);
  });

  afterAll(async () => {
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('listens on 127.0.0.1 on a port other than the system Redis', () => {
    const url = new URL(redis.url);
    expect(url.hostname).toBe('127.0.0.1');
    expect(url.port).not.toBe('6379');
  });

  it('answers PING, SET and GET', async () => {
    const reply = await sendCommands(redis.url, [['PING'], ['SET', 'greeting', 'hello'], ['GET', 'greeting']], 4);
    expect(reply).toBe('+PONG\r\n+OK\r\n$5\r\nhello\r\n');
  });

  it('runs with noeviction, as BullMQ requires', async () => {
    const reply = await sendCommands(redis.url, [['CONFIG', 'GET', 'maxmemory-policy']], 5);
    expect(reply).toContain('noeviction');
  });

  it('stops: the port no longer answers', async () => {
    const other = await startRedisServer({ dataDir: dir });
    await other.stop();
    await expect(sendCommands(other.url, [['PING']], 1)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe('startRedisServer without redis-server', () => {
  it('says what to install or to set REDIS_URL, and does not try apt-get when it cannot be found', async () => {
    const asked: string[] = [];
    const findExecutable = (name: string) => {
      asked.push(name);
      return undefined;
    };
    await expect(startRedisServer({ dataDir: tmpdir(), findExecutable })).rejects.toThrow(
      /redis-server was not found on PATH, \/usr\/bin or \/usr\/sbin\. Install Redis .*apt-get install redis-server.*set REDIS_URL/,
    );
    expect(asked).toEqual(['redis-server', 'apt-get']);
  });
});
