import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertJobs } from '@inferq/db';
import { createTestContext, insertTestOwner, newTestJob, type TestContext, testJobId } from '@inferq/test-utils';
import { checkAcceptsAfterFailover, createRecentAccepts } from '../src/services/jobs/intake/recent-accepts.ts';

// The jobs an API accepted lately, checked against the record after a Postgres failover: those with no row (an
// asynchronous standby promoted before their commits reached it) are recorded as lost once, counted and said.
// apps/worker/tests/postgres-failover.test.ts runs it through a real failover.

let t: TestContext;
let owner: string;
beforeAll(async () => {
  t = await createTestContext();
  owner = await insertTestOwner(t.pool, 'recent-accepts');
});
afterAll(() => t?.close());

describe('the jobs accepted lately, after a failover', () => {
  it('records those with no row as lost, once, and leaves those the record has', async () => {
    const kept = newTestJob(owner);
    await insertJobs(t.pool, [kept]);
    const gone = [testJobId(), testJobId()];
    const recent = createRecentAccepts({ pool: t.pool });
    recent.note([{ id: kept.id, model: kept.modelName }, ...gone.map((id) => ({ id, model: 'mlp' }))]);

    const lines: string[] = [];
    const counted: Array<[string, number]> = [];
    const logger = { warn: (_: object, m: string) => lines.push(m), info: (_: object, m: string) => lines.push(m) };
    await checkAcceptsAfterFailover(recent, { logger, onLost: (model, n) => counted.push([model, n]) });
    expect(counted).toEqual([['mlp', 2]]);
    expect(lines).toEqual([expect.stringMatching(/^postgres failover lost accepted jobs.*410 JOB_LOST/)]);
    const { rows } = await t.pool.query<{ id: string }>('SELECT id::text FROM lost_jobs ORDER BY id');
    expect(rows.map((r) => r.id)).toEqual([...gone].sort());

    // A second failover, or the workers' check, does not count them again.
    expect(await recent.recheck()).toEqual([]);
  });

  it('keeps only the window and the cap', async () => {
    let now = 0;
    const recent = createRecentAccepts({ pool: t.pool, windowMs: 1_000, maxJobs: 2, now: () => now });
    const ids = [testJobId(), testJobId(), testJobId(), testJobId()];
    recent.note([{ id: ids[0]!, model: 'a' }]);
    now = 2_000;
    recent.note(ids.slice(1).map((id) => ({ id, model: 'b' })));
    // The first is past the window, the second past the cap: the last two are checked.
    expect((await recent.recheck()).map((j) => j.id)).toEqual(ids.slice(2));
  });
});
