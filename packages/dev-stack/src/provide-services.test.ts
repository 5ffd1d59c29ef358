import { createPool } from '@inferq/db';
import { createStorage } from '@inferq/storage';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { provideServices, type ProvidedServices } from './provide-services.ts';

function pingRedis(url: string): Promise<string> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) }, () => socket.write('PING\r\n'));
    socket.once('error', reject);
    socket.once('data', (data) => {
      socket.destroy();
      resolve(data.toString());
    });
  });
}

describe('provideServices on a machine with nothing configured', () => {
  let dir: string;
  let services: ProvidedServices;
  const lines: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-services-'));
    // mkdtemp makes it 0700; as root, postgres runs as the `postgres` user, which must reach the cluster.
    await chmod(dir, 0o755);
    const t0 = performance.now();
    services = await provideServices({ env: {}, dataDir: dir, log: (line) => lines.push(line) });
    console.log(`all three embedded services started in ${Math.round(performance.now() - t0)} ms:\n  ${lines.join('\n  ')}`);
  });

  afterAll(async () => {
    await services?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it('returns every variable the apps need', () => {
    expect(Object.keys(services.env).sort()).toEqual([
      'DATABASE_URL',
      'REDIS_URL',
      'S3_ACCESS_KEY_ID',
      'S3_ENDPOINT',
      'S3_FORCE_PATH_STYLE',
      'S3_REGION',
      'S3_SECRET_ACCESS_KEY',
    ]);
    expect(services.env.S3_FORCE_PATH_STYLE).toBe('true');
  });

  it('logs one line per service, without the database password', () => {
    expect(lines).toHaveLength(3);
    for (const name of ['Postgres', 'Redis', 'S3']) expect(lines.some((l) => l.startsWith(`started embedded ${name}`))).toBe(true);
    expect(lines.join('\n')).not.toContain(':inferq@');
  });

  it('serves working Postgres, Redis and S3 at those addresses', async () => {
    const pool = createPool({ url: services.env.DATABASE_URL!, schema: 'public', max: 1 });
    try {
      expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    } finally {
      await pool.end();
    }
    expect(await pingRedis(services.env.REDIS_URL!)).toBe('+PONG\r\n');
    const { S3_ENDPOINT, S3_REGION, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY } = services.env;
    const storage = createStorage({
      endpoint: S3_ENDPOINT,
      region: S3_REGION!,
      accessKeyId: S3_ACCESS_KEY_ID,
      secretAccessKey: S3_SECRET_ACCESS_KEY,
      bucket: 'provided',
      forcePathStyle: true,
    });
    try {
      await storage.ensureBucket();
      await storage.putObject('k', new Uint8Array([1, 2, 3]));
      expect(await storage.getObject('k')).toEqual(new Uint8Array([1, 2, 3]));
    } finally {
      storage.close();
    }
  });
});

describe('provideServices with everything configured', () => {
  it('starts nothing and returns no variables', async () => {
    const lines: string[] = [];
    const env = { DATABASE_URL: 'postgres://x@127.0.0.1:5432/x', REDIS_URL: 'redis://127.0.0.1:6379', S3_ENDPOINT: 'http://127.0.0.1:9000' };
    const services = await provideServices({ env, dataDir: join(tmpdir(), 'inferq-unused'), log: (line) => lines.push(line) });
    expect(services.env).toEqual({});
    expect(lines).toEqual([]);
    await services.stop();
  });
});
