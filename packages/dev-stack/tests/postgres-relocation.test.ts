import { createPool } from '@inferq/db';
import { existsSync, lstatSync, statSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPostgresBinaries, type PostgresBinaries } from '../src/postgres-binaries.ts';
import { startPostgresServer } from '../src/postgres-server.ts';

async function query<T>(url: string, sql: string): Promise<T[]> {
  const pool = createPool({ url, schema: 'public', max: 1 });
  try {
    return (await pool.query(sql)).rows as T[];
  } finally {
    await pool.end();
  }
}

// A clone at "/root/my clones/inferq" as root: /root is 0700, so the system
// user postgres (root runs postgres as it) reaches neither node_modules nor
// .inferq. Here the "home" is a 0700 temp directory with spaces in its path,
// holding a copy of the binaries; the relocation base is a temp directory too.
describe.skipIf(process.getuid?.() !== 0)('embedded Postgres as root, cloned under a 0700 directory with spaces', () => {
  let home: string;
  let base: string;
  let binaries: PostgresBinaries;
  let dataDir: string;

  beforeAll(async () => {
    home = await mkdtemp(join(tmpdir(), 'inferq home '));
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    base = await mkdtemp(join(tmpdir(), 'inferq-system-'));
    await chmod(base, 0o755);
    const installed = await findPostgresBinaries();
    binaries = { dir: join(home, 'my clones', 'inferq', 'native'), version: installed.version };
    await mkdir(dirname(binaries.dir), { recursive: true });
    await cp(installed.dir, binaries.dir, { recursive: true, verbatimSymlinks: true });
    dataDir = join(home, 'my clones', 'inferq', '.inferq', 'demo', 'postgres');
  });

  afterAll(async () => {
    await rm(home, { recursive: true, force: true });
    await rm(base, { recursive: true, force: true });
  });

  it('copies the binaries once to the relocation base, keeps the cluster there and serves queries', async () => {
    const lines: string[] = [];
    const t0 = performance.now();
    const server = await startPostgresServer({ dataDir, binaries, relocationBase: base, log: (l) => lines.push(l) });
    console.log(`relocated, initialised and started in ${Math.round(performance.now() - t0)} ms:\n  ${lines.join('\n  ')}`);
    try {
      expect(server.binDir).toBe(join(base, `postgres-${binaries.version}`));
      expect(existsSync(join(server.binDir, '.complete'))).toBe(true);
      expect(lstatSync(join(server.binDir, 'lib', 'libpq.so')).isSymbolicLink()).toBe(true);
      expect(dirname(server.dataDir)).toBe(join(base, 'data'));
      expect(existsSync(dataDir)).toBe(false);
      // Only the finished copy and the data: no temp directory left behind.
      expect((await readdir(base)).sort()).toEqual(['data', `postgres-${binaries.version}`]);
      expect(lines.join('\n')).toContain(server.binDir);
      expect(lines.join('\n')).toContain(server.dataDir);
      const [row] = await query<{ dir: string }>(server.url, "SELECT current_setting('data_directory') AS dir");
      expect(row?.dir).toBe(server.dataDir);
      await query(server.url, 'CREATE TABLE kept (id int); INSERT INTO kept VALUES (7)');
    } finally {
      await server.stop();
    }
  });

  it('reuses the copy and the cluster on the next start', async () => {
    const copyMarker = join(base, `postgres-${binaries.version}`, '.complete');
    const markerBefore = statSync(copyMarker).mtimeMs;
    const server = await startPostgresServer({ dataDir, binaries, relocationBase: base });
    try {
      expect(statSync(copyMarker).mtimeMs).toBe(markerBefore);
      expect(await query(server.url, 'SELECT id FROM kept')).toEqual([{ id: 7 }]);
    } finally {
      await server.stop();
    }
  });
});
