import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startPostgresServer, startRedisServer, startS3Server } from '@inferq/dev-stack';
import { createRedisConnection } from '@inferq/queue';

/**
 * A Postgres, Redis or S3 server of one test file's own, for fault tests that
 * stop, restart or flush it: the shared services at 127.0.0.1 must never be.
 * Pass `env` to `startStack({ services })`; the port stays the same across
 * restarts, so every process keeps its URL.
 */
export interface PrivateService {
  /** The variables that point a stack at this server. */
  readonly env: Record<string, string>;
  /** Stops the server; its port and data directory are kept for start(). */
  stop(): Promise<void>;
  /** Starts it again on the same port over the same data directory (no-op when running). */
  start(): Promise<void>;
  restart(): Promise<void>;
  /** Stops it for good and deletes its data. */
  close(): Promise<void>;
}

export interface PrivateRedis extends PrivateService {
  /** FLUSHALL: every key gone (queues, epoch, worker registry), the server still up. */
  flush(): Promise<void>;
  /** CLIENT KILL TYPE normal: every client's connection cut, as when a primary dies and clients reconnect; the data kept. */
  cutClients(): Promise<void>;
}

interface Launched {
  /** The server's URL or endpoint; its port is reused on restart. */
  url: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

async function startPrivateService(kind: string, launch: (dir: string, port: number | undefined) => Promise<Launched>): Promise<PrivateService> {
  const dir = await mkdtemp(join(tmpdir(), `inferq-${kind}-`));
  // Run as root, embedded Postgres runs as the `postgres` user, which must reach its data below here.
  await chmod(dir, 0o755);
  let running: Launched | undefined = await launch(dir, undefined);
  const { env } = running;
  const port = Number(new URL(running.url).port);
  const service: PrivateService = {
    env,
    async stop() {
      await running?.stop();
      running = undefined;
    },
    async start() {
      running ??= await launch(dir, port);
    },
    async restart() {
      await service.stop();
      await service.start();
    },
    async close() {
      await service.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
  return service;
}

/** A redis-server of the test's own (no persistence: a restart loses every key, as a flush does). */
export async function startPrivateRedis(): Promise<PrivateRedis> {
  const service = await startPrivateService('redis', async (dir, port) => {
    const server = await startRedisServer({ dataDir: dir, port });
    return { url: server.url, env: { REDIS_URL: server.url }, stop: server.stop };
  });
  const withConnection = async (run: (redis: ReturnType<typeof createRedisConnection>) => Promise<unknown>) => {
    const redis = createRedisConnection(service.env.REDIS_URL!, 'consumer');
    try {
      await run(redis);
    } finally {
      redis.disconnect();
    }
  };
  return {
    ...service,
    flush: () => withConnection((redis) => redis.flushall()),
    // Its own connection is cut too; the reply comes first.
    cutClients: () => withConnection((redis) => redis.client('KILL', 'TYPE', 'normal')),
  };
}

/** An embedded Postgres of the test's own; its data survives restarts. Initialising it takes seconds: one per test file. */
export function startPrivatePostgres(): Promise<PrivateService> {
  return startPrivateService('postgres', async (dir, port) => {
    const server = await startPostgresServer({ dataDir: join(dir, 'data'), port });
    return { url: server.url, env: { DATABASE_URL: server.url }, stop: server.stop };
  });
}

/** The embedded S3 server of the test's own; objects are files under its directory and survive restarts. */
export function startPrivateS3(): Promise<PrivateService> {
  return startPrivateService('s3', async (dir, port) => {
    const server = await startS3Server({ dir, port });
    return {
      url: server.endpoint,
      env: { S3_ENDPOINT: server.endpoint, S3_ACCESS_KEY_ID: server.accessKeyId, S3_SECRET_ACCESS_KEY: server.secretAccessKey, S3_REGION: server.region },
      stop: server.stop,
    };
  });
}
