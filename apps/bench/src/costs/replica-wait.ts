/**
 * The other way to keep a failover from losing acknowledged queue writes (#27 item 1): make each submit group's queue
 * write durable on a replica before the 202 (`WAIT 1 <timeout>` after it), measured against the plain write, on a
 * primary and a replica of this script's own (loopback, no persistence). One group at a time, as the API's group commit
 * sends them: `groups` of `size` jobs each way, interleaved; prints the median and p99 a group, and per job.
 * `node --import tsx apps/bench/src/costs/replica-wait.ts [groups] [size]`
 */
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startRedisServer } from '@inferq/dev-stack';
import { createJobProducer, createRedisConnection, enqueueRequestFor, waitForReady, type RedisClient } from '@inferq/queue';
import { percentile } from '../stats.ts';

const [groups = 2_000, size = 1] = process.argv.slice(2, 4).map(Number);
const WAIT_TIMEOUT_MS = 1_000;

const dir = await mkdtemp(join(tmpdir(), 'inferq-replica-wait-'));
const primary = await startRedisServer({ dataDir: join(dir, 'primary') });
const replica = await startRedisServer({ dataDir: join(dir, 'replica') });
const connections: RedisClient[] = [];
try {
  const admin = createRedisConnection(replica.url, 'producer');
  const connection = createRedisConnection(primary.url, 'producer');
  connections.push(admin, connection);
  await Promise.all([waitForReady(admin, 5_000), waitForReady(connection, 5_000)]);
  const { port } = new URL(primary.url);
  await admin.replicaof('127.0.0.1', Number(port));
  while (!(await admin.info('replication')).includes('master_link_status:up')) await new Promise((r) => setTimeout(r, 50));

  const producer = createJobProducer({ connection, prefix: `{bench-${randomUUID().slice(0, 8)}}` });
  const group = () =>
    Array.from({ length: size }, () =>
      enqueueRequestFor({ id: randomUUID(), modelName: 'mlp', modelVersion: 1, priority: 'normal', ownerKeyId: randomUUID(), deadlineAt: null }, [
        { name: 'x', datatype: 'FP32', shape: [1, 64] },
      ]),
    );
  const plain: number[] = [];
  const waited: number[] = [];
  let unacknowledged = 0;
  for (let i = 0; i < groups; i++) {
    let t = performance.now();
    await producer.enqueueJobs(group());
    plain.push(performance.now() - t);
    t = performance.now();
    await producer.enqueueJobs(group());
    if (((await connection.call('WAIT', '1', String(WAIT_TIMEOUT_MS))) as number) < 1) unacknowledged++;
    waited.push(performance.now() - t);
  }
  const row = (what: string, ms: number[]) => {
    const us = (v: number) => (v * 1000).toFixed(0).padStart(6);
    const [p50, p99] = [percentile(ms, 50)!, percentile(ms, 99)!];
    return `${what.padEnd(28)} p50 ${us(p50)} µs  p99 ${us(p99)} µs  (${us(p50 / size).trim()} µs a job at p50)`;
  };
  console.log(`${groups} groups of ${size} job(s) each way, loopback primary and replica`);
  console.log(row('enqueue', plain));
  console.log(row('enqueue + WAIT 1', waited));
  console.log(`WAIT answered with no replica acknowledging: ${unacknowledged}`);
  await producer.close();
} finally {
  for (const c of connections) c.disconnect();
  await replica.stop();
  await primary.stop();
  await rm(dir, { recursive: true, force: true });
}
