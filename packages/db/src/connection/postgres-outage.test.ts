import { EventEmitter } from 'node:events';
import { Registry } from 'prom-client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Pool } from './pool.ts';
import { createPostgresOutageMetrics } from './postgres-outage-metrics.ts';
import { walFileTimeline, watchPostgresOutages, type PostgresOutageOptions } from './postgres-outage.ts';

type Answer = { row: Record<string, unknown> } | { error: Error & { code?: string } } | 'hang';

const primary = (timeline: number, server = '10.0.0.1:5432') => ({
  row: { in_recovery: false, read_only: 'off', server, wal_file: `${timeline.toString(16).padStart(8, '0')}000000000000000A`, checkpoint_timeline: timeline },
});
const standby = { row: { in_recovery: true, read_only: 'on', server: '10.0.0.1:5432', wal_file: null, checkpoint_timeline: 1 } };
const refused = { error: Object.assign(new Error('connect ECONNREFUSED 10.0.0.1:5432'), { code: 'ECONNREFUSED' }) };

/** A pool that answers each probe with the answer set now; `hang` holds it until release(). */
function fakePool() {
  const emitter = new EventEmitter();
  let answer: Answer = primary(1);
  const held: Array<() => void> = [];
  const statements: string[] = [];
  const pool = Object.assign(emitter, {
    query(config: { text: string }) {
      statements.push(config.text);
      const now = answer;
      if (now === 'hang') return new Promise((_, reject) => held.push(() => reject(new Error('Query read timeout'))));
      if ('error' in now) return Promise.reject(now.error);
      return Promise.resolve({ rows: [now.row] });
    },
  });
  return {
    pool: pool as unknown as Pool,
    emitter,
    statements,
    answer: (next: Answer) => void (answer = next),
    release: () => held.splice(0).forEach((r) => r()),
  };
}

function recordingLogger() {
  const lines: Array<{ level: string; message: string; fields: object }> = [];
  const at = (level: string) => (fields: object, message: string) => void lines.push({ level, message, fields });
  return { lines, logger: { warn: at('warn'), info: at('info'), debug: at('debug') } };
}

describe('postgres outage watch', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function start(extra: Partial<PostgresOutageOptions> = {}) {
    const fake = fakePool();
    const { lines, logger } = recordingLogger();
    const changes: Array<[boolean, number | undefined]> = [];
    const failovers: Array<[number | undefined, number | undefined]> = [];
    const watch = watchPostgresOutages(fake.pool, {
      logger,
      intervalMs: 1_000,
      probeTimeoutMs: 500,
      onChange: (up, ms) => changes.push([up, ms]),
      onFailover: (now, before) => failovers.push([before.timeline, now.timeline]),
      ...extra,
    });
    watch.start();
    const said = (level: string) => lines.filter((l) => l.level === level).map((l) => l.message);
    return { ...fake, watch, lines, said, changes, failovers };
  }

  it('says an outage once each way, with its length', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    expect(t.watch.primary).toEqual({ timeline: 1, server: '10.0.0.1:5432' });
    t.answer(refused);
    // Two probes in a row fail (the second at once): an outage.
    await vi.advanceTimersByTimeAsync(1_001);
    expect(t.watch.downSince).toBeDefined();
    await vi.advanceTimersByTimeAsync(2_999);
    expect(t.said('warn')).toEqual([
      'postgres primary lost (the server does not answer): submits answer 503 DATABASE_UNAVAILABLE until a primary takes writes again',
    ]);
    t.answer(primary(1));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.said('warn')).toHaveLength(1);
    // From the second failed probe (t = 1 s) to the first that answers (t = 4 s).
    expect(t.said('info')).toEqual(['postgres accepting writes again after 3.0 s']);
    expect(t.changes).toEqual([
      [false, undefined],
      [true, 3_000],
    ]);
    expect(t.failovers).toEqual([]);
    await t.watch.stop();
  });

  it('counts a standby, or a read-only server, as no primary', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    t.answer(standby);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.said('warn')).toEqual([
      'postgres primary lost (the server answering is in recovery: a standby takes no writes): ' +
        'submits answer 503 DATABASE_UNAVAILABLE until a primary takes writes again',
    ]);
    t.answer({ row: { ...primary(1).row, read_only: 'on' } });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.watch.downSince).toBeDefined();
    expect(t.said('warn')).toHaveLength(1);
    await t.watch.stop();
  });

  it('counts a failover when a promoted standby answers on a new timeline, or another server answers', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    t.answer(standby);
    await vi.advanceTimersByTimeAsync(1_000);
    t.answer(primary(2));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.failovers).toEqual([[1, 2]]);
    expect(t.said('info')).toEqual(['postgres accepting writes again after 1.0 s, now 10.0.0.1:5432 on timeline 2 (was 10.0.0.1:5432 on 1)']);
    // A switchover between two probes: no outage seen, the server answering is another one.
    t.answer(primary(2, '10.0.0.2:5432'));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.failovers).toEqual([
      [1, 2],
      [2, 2],
    ]);
    expect(t.changes).toEqual([
      [false, undefined],
      [true, 1_000],
    ]);
    // The same primary again and again: nothing more.
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.failovers).toHaveLength(2);
    await t.watch.stop();
  });

  it('holds a probe to its own time limit, and sends no statement while one that timed out still holds its connection', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    t.answer('hang');
    const before = t.statements.length;
    // One probe without an answer is no outage: the next, at once, waits for the same statement.
    await vi.advanceTimersByTimeAsync(1_000 + 500);
    expect(t.watch.downSince).toBeUndefined();
    await vi.advanceTimersByTimeAsync(501);
    expect(t.watch.downSince).toBeDefined();
    expect(t.said('warn')).toEqual([
      'postgres primary lost (no answer within 500 ms): submits answer 503 DATABASE_UNAVAILABLE until a primary takes writes again',
    ]);
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.statements.length).toBe(before + 1);
    t.answer(primary(1));
    t.release();
    await vi.advanceTimersByTimeAsync(1_500);
    expect(t.watch.downSince).toBeUndefined();
    expect(t.said('info')).toHaveLength(1);
    await t.watch.stop();
  });

  it('probes at once on a failed statement it is told of, or a connection the pool loses', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    const before = t.statements.length;
    t.watch.queryFailed(new Error('duplicate key value violates unique constraint'));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.statements.length).toBe(before);
    // A connection a restart left stale, the server answering again: no outage.
    t.emitter.emit('error', Object.assign(new Error('Connection terminated unexpectedly'), {}));
    await vi.advanceTimersByTimeAsync(0);
    expect(t.statements.length).toBe(before + 1);
    expect(t.watch.downSince).toBeUndefined();
    // The server going down: the probes sent at once find it so.
    t.answer(refused);
    t.emitter.emit('error', Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
    await vi.advanceTimersByTimeAsync(1);
    expect(t.watch.downSince).toBeDefined();
    expect(t.said('warn')).toEqual([
      'postgres primary lost (the server does not answer): submits answer 503 DATABASE_UNAVAILABLE until a primary takes writes again',
    ]);
    t.answer(primary(1));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(t.watch.downSince).toBeUndefined();
    await t.watch.stop();
  });

  it('declares no outage for one failed probe between answers', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(0);
    t.answer({ error: Object.assign(new Error('timeout exceeded when trying to connect'), {}) });
    await vi.advanceTimersByTimeAsync(1_000);
    t.answer(primary(1));
    await vi.advanceTimersByTimeAsync(5_000);
    expect(t.watch.downSince).toBeUndefined();
    expect(t.said('warn')).toEqual([]);
    expect(t.changes).toEqual([]);
    await t.watch.stop();
  });

  it('reads the server alone where the timeline is refused', async () => {
    const t = start();
    t.answer({ error: Object.assign(new Error('permission denied for function pg_control_checkpoint'), { code: '42501' }) });
    const query = t.pool.query.bind(t.pool) as (c: { text: string }) => Promise<unknown>;
    (t.pool as unknown as { query: typeof query }).query = (c) =>
      c.text.includes('pg_control_checkpoint')
        ? query(c)
        : Promise.resolve({ rows: [{ ...primary(1).row, wal_file: undefined, checkpoint_timeline: undefined }] });
    await vi.advanceTimersByTimeAsync(0);
    expect(t.watch.downSince).toBeUndefined();
    expect(t.watch.primary).toEqual({ timeline: undefined, server: '10.0.0.1:5432' });
    expect(t.said('warn')).toEqual(['postgres probe cannot read the timeline: failovers are told by the server answering alone']);
    await vi.advanceTimersByTimeAsync(3_000);
    expect(t.said('warn')).toHaveLength(1);
    await t.watch.stop();
  });

  it('stops probing and listening on stop()', async () => {
    const t = start();
    await vi.advanceTimersByTimeAsync(2_000);
    await t.watch.stop();
    const count = t.statements.length;
    await vi.advanceTimersByTimeAsync(10_000);
    expect(t.statements.length).toBe(count);
    expect(t.emitter.listenerCount('error')).toBe(0);
  });

  it('feeds inferq_postgres_up, its outages, their lengths and the failovers', async () => {
    const registry = new Registry();
    const t = start(createPostgresOutageMetrics(registry));
    const read = async () =>
      (await registry.metrics()).split('\n').filter((l) => /^inferq_postgres_(up|outages_total|failovers_total|outage_seconds_count) /.test(l));
    await vi.advanceTimersByTimeAsync(0);
    expect(await read()).toEqual([
      'inferq_postgres_up 1',
      'inferq_postgres_outages_total 0',
      'inferq_postgres_outage_seconds_count 0',
      'inferq_postgres_failovers_total 0',
    ]);
    t.answer(refused);
    await vi.advanceTimersByTimeAsync(1_001);
    expect(await read()).toContain('inferq_postgres_up 0');
    t.answer(primary(2));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(await read()).toEqual([
      'inferq_postgres_up 1',
      'inferq_postgres_outages_total 1',
      'inferq_postgres_outage_seconds_count 1',
      'inferq_postgres_failovers_total 1',
    ]);
    await t.watch.stop();
  });
});

describe('walFileTimeline', () => {
  it('reads the timeline from a WAL segment name', () => {
    expect(walFileTimeline('000000010000000000000001')).toBe(1);
    expect(walFileTimeline('0000001A00000003000000FF')).toBe(26);
    expect(walFileTimeline('')).toBeUndefined();
  });
});
