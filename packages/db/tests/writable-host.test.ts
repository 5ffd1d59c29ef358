import { once } from 'node:events';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startPrivatePostgres, waitFor, type PrivateService } from '@inferq/test-utils';
import { createPool, isDatabaseUnavailable, type Pool } from '../src/connection/pool.ts';
import { parsePostgresUrl, type PostgresHost } from '../src/connection/postgres-url.ts';

// A multi-host DATABASE_URL with target_session_attrs=read-write, honoured as libpq does: every connection of the pool
// goes to the host that takes writes, and moves when that changes. Two servers of the test's own stand for a primary
// and its standby; a server whose sessions are read-only (default_transaction_read_only) answers libpq's read-write
// check as a standby does, so the roles can be swapped in a second.

let a: PrivateService;
let b: PrivateService;
const pools: Pool[] = [];
const hostOf = (s: PrivateService) => parsePostgresUrl(s.env.DATABASE_URL!).hosts[0]!;

async function setReadOnly(server: PrivateService, readOnly: boolean): Promise<void> {
  const admin = createPool({ url: server.env.DATABASE_URL!, schema: 'public', max: 1 });
  try {
    await admin.query(`ALTER SYSTEM SET default_transaction_read_only = ${readOnly ? 'on' : 'off'}`);
    await admin.query('SELECT pg_reload_conf()');
    // A demotion restarts the server: its sessions end. So do these, but for this one.
    await admin.query('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid <> pg_backend_pid() AND backend_type = $1', ['client backend']);
  } finally {
    await admin.end();
  }
  // The reload reaches the postmaster a moment later: wait until a new session sees it.
  await waitFor(
    async () => {
      const probe = createPool({ url: server.env.DATABASE_URL!, schema: 'public', max: 1 });
      try {
        const { rows } = await probe.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
        return rows[0]!.transaction_read_only === (readOnly ? 'on' : 'off');
      } finally {
        await probe.end();
      }
    },
    { timeoutMs: 10_000, what: 'the new setting in a new session' },
  );
}

function multiHostUrl(target = 'read-write'): string {
  const [ha, hb] = [hostOf(a), hostOf(b)];
  return ha.url.replace(`${ha.host}:${ha.port}`, `${ha.host}:${ha.port},${hb.host}:${hb.port}`) + `?target_session_attrs=${target}`;
}

async function serverPort(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ port: number }>('SELECT inet_server_port() AS port');
  return rows[0]!.port;
}

beforeAll(async () => {
  [a, b] = await Promise.all([startPrivatePostgres(), startPrivatePostgres()]);
  await setReadOnly(a, true);
});
afterAll(async () => {
  await Promise.all(pools.map((p) => p.end().catch(() => {})));
  await Promise.all([a?.close(), b?.close()]);
});

describe('a multi-host DATABASE_URL with target_session_attrs=read-write', () => {
  it('connects every session to the host that takes writes, skipping a standby listed first', async () => {
    const pool = createPool({ url: multiHostUrl(), schema: 'public', max: 4 });
    pools.push(pool);
    await pool.query('CREATE TABLE IF NOT EXISTS probe (n int)');
    await Promise.all([1, 2, 3, 4].map((n) => pool.query('INSERT INTO probe VALUES ($1)', [n])));
    expect(await serverPort(pool)).toBe(hostOf(b).port);
  });

  it('moves to the promoted host when the primary is demoted, with the failed statements answered as unavailable', async () => {
    const changes: Array<[PostgresHost, PostgresHost | undefined]> = [];
    const pool = createPool({ url: multiHostUrl(), schema: 'public', max: 4, onHostChange: (to, from) => changes.push([to, from]) });
    pools.push(pool);
    expect(await serverPort(pool)).toBe(hostOf(b).port);

    // The failover: b becomes the standby, a the primary.
    await setReadOnly(a, false);
    await setReadOnly(b, true);
    const errors: unknown[] = [];
    await waitFor(
      async () => {
        try {
          await pool.query('CREATE TABLE IF NOT EXISTS moved (n int); INSERT INTO moved VALUES (1)');
          return true;
        } catch (err) {
          errors.push(err);
          return false;
        }
      },
      { timeoutMs: 20_000, what: 'a write through the pool after the failover' },
    );
    expect(await serverPort(pool)).toBe(hostOf(a).port);
    expect(errors.every(isDatabaseUnavailable)).toBe(true);
    expect(changes.map(([to, from]) => [to.port, from?.port])).toEqual([
      [hostOf(b).port, undefined],
      [hostOf(a).port, hostOf(b).port],
    ]);
  });

  it('skips a host that is down, and says which hosts it tried when none takes writes', async () => {
    await b.stop();
    const pool = createPool({ url: multiHostUrl(), schema: 'public', max: 2 });
    pools.push(pool);
    expect(await serverPort(pool)).toBe(hostOf(a).port);

    await setReadOnly(a, true);
    const refused = await pool.query('SELECT 1').then(
      () => undefined,
      (err: unknown) => err,
    );
    expect(isDatabaseUnavailable(refused)).toBe(true);
    await expect(pool.query('SELECT 1')).rejects.toThrow(
      new RegExp(`no Postgres host takes writes: .*${hostOf(a).port} \\(read-only\\), .*${hostOf(b).port} \\(.*ECONNREFUSED`),
    );
    // b comes back as the primary.
    await b.start();
    await setReadOnly(b, false);
    expect(await serverPort(pool)).toBe(hostOf(b).port);
  });

  it('is not held up by a host that takes connections and never answers (a primary that vanished), and gives a statement up after its timeout', async () => {
    // Its connections, open until a probe gives up on them.
    const waiting = new Set<Socket>();
    const silent = createServer((socket) => {
      waiting.add(socket);
      socket.on('close', () => waiting.delete(socket));
    }).listen(0, '127.0.0.1');
    await once(silent, 'listening');
    try {
      const port = (silent.address() as AddressInfo).port;
      const hb = hostOf(b);
      const pool = createPool({
        url: `${hb.url.replace(`${hb.host}:${hb.port}`, `127.0.0.1:${port},${hb.host}:${hb.port}`)}?target_session_attrs=read-write`,
        schema: 'public',
        max: 1,
        queryTimeoutMs: 1_000,
      });
      pools.push(pool);
      expect(await serverPort(pool)).toBe(hb.port);
      // Connected while the silent host's probe still waits: the look did not wait for its timeout.
      expect(waiting.size).toBeGreaterThan(0);
      await expect(pool.query('SELECT pg_sleep(5)')).rejects.toThrow(/Query read timeout/);
    } finally {
      silent.close();
    }
  });

  it('takes the first host that answers with target_session_attrs=any, as libpq does', async () => {
    const pool = createPool({ url: multiHostUrl('any'), schema: 'public', max: 1 });
    pools.push(pool);
    expect(await serverPort(pool)).toBe(hostOf(a).port);
  });
});
