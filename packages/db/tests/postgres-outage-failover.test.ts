import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postgresHaAvailable, startPostgresHa, waitFor, type PostgresHa } from '@inferq/test-utils';
import { createPool, type Pool } from '../src/connection/pool.ts';
import { watchPostgresOutages, type PostgresOutageWatch, type PostgresPrimary } from '../src/connection/postgres-outage.ts';

// The outage watch on a real failover: two Patroni nodes behind HAProxy, a planned switchover. The pool reaches the
// new primary through the endpoint; the watch sees the primary lost and back, on a new timeline and another server,
// and counts one failover. Skipped where Patroni, etcd and HAProxy cannot run (root and Debian's packages).

let ha: PostgresHa | undefined;
let pool: Pool | undefined;
let watch: PostgresOutageWatch | undefined;
const lines: string[] = [];
const failovers: Array<{ from: PostgresPrimary; to: PostgresPrimary }> = [];
const changes: boolean[] = [];

beforeAll(async () => {
  if (!postgresHaAvailable()) return;
  ha = await startPostgresHa({ nodes: 2, synchronous: false, ttl: 10, loopWait: 2, retryTimeout: 4 });
  pool = createPool({ url: ha.endpointUrl, schema: 'public', max: 2 });
  const say = (fields: object, message: string) => void lines.push(message);
  watch = watchPostgresOutages(pool, {
    logger: { warn: say, info: say, debug: () => {} },
    onChange: (up) => changes.push(up),
    onFailover: (to, from) => failovers.push({ from, to }),
  });
  watch.start();
}, 180_000);
afterAll(async () => {
  await watch?.stop();
  await pool?.end();
  await ha?.close();
});

describe.skipIf(!postgresHaAvailable())('postgres outage watch on a real switchover', () => {
  it('sees the primary lost and back, on a new timeline and another server: one failover', async () => {
    const before = await waitFor(() => watch!.primary, { what: 'the first probe to find the primary' });
    expect(before.timeline).toBeGreaterThanOrEqual(1);
    await ha!.switchover();
    await waitFor(() => failovers.length > 0 && watch!.downSince === undefined, {
      timeoutMs: 30_000,
      what: () => `a failover seen; said:\n${lines.join('\n')}`,
    });
    expect(failovers).toHaveLength(1);
    const { from, to } = failovers[0]!;
    expect(to.server).not.toBe(from.server);
    expect(to.timeline).toBeGreaterThan(from.timeline!);
    expect(lines.filter((l) => l.startsWith('postgres primary lost ('))).toHaveLength(changes.filter((up) => !up).length);
    expect(lines.some((l) => /^postgres (accepting writes again after \d+\.\d s|primary changed without an outage seen), now /.test(l))).toBe(true);
  }, 120_000);
});
