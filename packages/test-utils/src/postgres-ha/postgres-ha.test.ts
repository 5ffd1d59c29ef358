import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool } from '@inferq/db';
import { postgresHaAvailable, startPostgresHa, type PostgresHa } from './postgres-ha.ts';

// The HA Postgres itself: a primary killed like a dead host, a planned switchover, the killed node back as a replica.
// Timings go to the log for the docs (DESIGN.md, Environment facts).

describe.skipIf(!postgresHaAvailable())('Postgres HA (Patroni, etcd, HAProxy)', () => {
  let ha: PostgresHa;
  const pool = () => createPool({ url: ha.endpointUrl, schema: 'public', max: 2, applicationName: 'postgres-ha-test' });
  const count = async () => {
    const p = pool();
    try {
      return Number((await p.query<{ n: string }>('SELECT count(*) AS n FROM ha_rows')).rows[0]!.n);
    } finally {
      await p.end();
    }
  };

  beforeAll(async () => {
    const started = Date.now();
    ha = await startPostgresHa({ nodes: 3, synchronous: true, ttl: 10, loopWait: 2, retryTimeout: 4 });
    console.log(`postgres-ha: 3 nodes (sync) up in ${Date.now() - started} ms; primary ${await ha.primary()}`);
  }, 150_000);
  afterAll(async () => {
    await ha?.close();
  }, 60_000);

  it('fails over from a killed primary, switches over, and takes the killed node back as a replica', async () => {
    const p = pool();
    try {
      await p.query('CREATE TABLE ha_rows (id int PRIMARY KEY)');
      await p.query('INSERT INTO ha_rows SELECT generate_series(1, 100)');
    } finally {
      await p.end();
    }

    const killedAt = Date.now();
    const killed = await ha.killPrimary();
    const promoted = await ha.waitForNewPrimary(killed, 90_000);
    const failoverMs = Date.now() - killedAt;
    console.log(
      `postgres-ha: failover ${killed} -> ${promoted} in ${failoverMs} ms (SIGKILL to writes through the endpoint; ttl 10, loop_wait 2, retry_timeout 4)`,
    );
    expect(promoted).not.toBe(killed);
    expect(await ha.primary()).toBe(promoted);
    expect(await count()).toBe(100); // synchronous: every acknowledged row survives

    const switched = await ha.switchover();
    console.log(`postgres-ha: switchover ${switched.from} -> ${switched.to} in ${switched.ms} ms (request to writes through the endpoint)`);
    expect(switched.from).toBe(promoted);
    expect(await ha.primary()).toBe(switched.to);
    const after = pool();
    try {
      await after.query('INSERT INTO ha_rows SELECT generate_series(101, 110)');
    } finally {
      await after.end();
    }

    const rejoinStarted = Date.now();
    await ha.restartNode(killed);
    console.log(`postgres-ha: ${killed} rejoined as a streaming replica in ${Date.now() - rejoinStarted} ms`);
    expect(await ha.primary()).toBe(switched.to);
    // The rejoined node has every row, read on the node itself.
    const node = ha.nodes.find((n) => n.name === killed)!;
    const direct = createPool({ url: `postgres://postgres@127.0.0.1:${node.pgPort}/postgres`, schema: 'public', max: 1 });
    try {
      expect((await direct.query<{ r: boolean }>('SELECT pg_is_in_recovery() AS r')).rows[0]!.r).toBe(true);
      await expect.poll(async () => Number((await direct.query<{ n: string }>('SELECT count(*) AS n FROM ha_rows')).rows[0]!.n), { timeout: 10_000 }).toBe(110);
    } finally {
      await direct.end();
    }
  }, 240_000);
});
