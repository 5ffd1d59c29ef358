import { createPool } from '@inferq/db';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBinaries } from './postgres-binaries.ts';
import { startPostgresServer } from './postgres-server.ts';
import { ServiceStartError } from './service-start-error.ts';

async function query<T>(url: string, sql: string): Promise<T[]> {
  const pool = createPool({ url, schema: 'public', max: 1 });
  try {
    return (await pool.query(sql)).rows as T[];
  } finally {
    await pool.end();
  }
}

const hookedEvents = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'message', 'exit'] as const;

describe('startPostgresServer', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-postgres-'));
    // mkdtemp makes it 0700; opened, the `postgres` user (root runs postgres as it) reaches the cluster in place.
    await chmod(dir, 0o755);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('initialises a cluster, creates the inferq database and serves SELECT 1', async () => {
    const dataDir = join(dir, 'postgres');
    const t0 = performance.now();
    const server = await startPostgresServer({ dataDir, relocationBase: join(dir, 'unused') });
    console.log(`embedded Postgres initialised and started in ${Math.round(performance.now() - t0)} ms`);
    try {
      const url = new URL(server.url);
      expect(url.hostname).toBe('127.0.0.1');
      expect(url.port).not.toBe('5432');
      expect(url.pathname).toBe('/inferq');
      // Reachable where they are: nothing is relocated.
      expect(server.dataDir).toBe(dataDir);
      expect(server.binDir).toBe((await findPostgresBinaries()).dir);
      expect(existsSync(join(dir, 'unused'))).toBe(false);
      expect(await query(server.url, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      const [row] = await query<{ db: string; version: string }>(server.url, "SELECT current_database() AS db, current_setting('server_version') AS version");
      expect(row?.db).toBe('inferq');
      expect(row?.version).toMatch(/^18\./);
      await query(server.url, 'CREATE TABLE kept (id int); INSERT INTO kept VALUES (42)');
    } finally {
      await server.stop();
    }
    expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true);
  });

  it('reuses the cluster on the next start, keeping its data', async () => {
    const t0 = performance.now();
    const server = await startPostgresServer({ dataDir: join(dir, 'postgres') });
    console.log(`embedded Postgres restarted on an existing cluster in ${Math.round(performance.now() - t0)} ms`);
    try {
      expect(await query(server.url, 'SELECT id FROM kept')).toEqual([{ id: 42 }]);
    } finally {
      await server.stop();
    }
  });

  it('leaves process signal handling to the app: only an exit hook while running, gone after stop()', async () => {
    const before = hookedEvents.map((e) => process.listenerCount(e));
    const server = await startPostgresServer({ dataDir: join(dir, 'postgres') });
    const during = hookedEvents.map((e) => process.listenerCount(e));
    await server.stop();
    expect(during).toEqual(before.map((n, i) => (hookedEvents[i] === 'exit' ? n + 1 : n)));
    expect(hookedEvents.map((e) => process.listenerCount(e))).toEqual(before);
  });

  it('reports binaries that cannot run as a ServiceStartError naming the cause and the fix, not a spawn crash', async () => {
    const empty = join(dir, 'no-binaries');
    await mkdir(empty, { recursive: true });
    const err = await startPostgresServer({
      dataDir: join(dir, 'unstartable'),
      binaries: { dir: empty, version: 'none' },
      relocationBase: join(dir, 'system'),
    }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ServiceStartError);
    const { service, reason, fix } = err as ServiceStartError;
    expect(service).toBe('Postgres');
    expect(reason).toContain(empty.split('/')[1]);
    expect(fix).toContain('DATABASE_URL');
  });
});
