import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, insertTestOwner, newTestJob, type TestContext, testJobId } from '@inferq/test-utils';
import { cancelQueuedJob, insertJobs } from '../src/index.ts';
import { findJobsWithoutRow } from '../src/runs/job-claims.ts';
import { deleteLostJobsBefore, findLostJob, recordLostJobs } from '../src/jobs/lost-jobs.ts';

// Jobs the record lost (migration 0026): a queue entry whose job has no row at
// all is told apart from a canceled or finished one, recorded once, found by
// id, and aged out like a tombstone.

let t: TestContext;
let owner: string;
beforeAll(async () => {
  t = await createTestContext();
  owner = await insertTestOwner(t.pool, 'lost-jobs');
});
afterAll(() => t?.close());

describe('jobs the record lost', () => {
  it('finds the ids with no row at all, whatever the status of the others, over days apart', async () => {
    const queued = newTestJob(owner);
    const canceled = newTestJob(owner);
    await insertJobs(t.pool, [queued, canceled]);
    expect((await cancelQueuedJob(t.pool, canceled.id, owner))?.status).toBe('canceled');
    const gone = [testJobId(), testJobId(new Date(Date.now() - 86_400_000))];
    expect(await findJobsWithoutRow(t.pool, [queued.id, gone[0]!, canceled.id, gone[1]!])).toEqual(gone);
    expect(await findJobsWithoutRow(t.pool, [queued.id.toUpperCase()])).toEqual([]);
    expect(await findJobsWithoutRow(t.pool, [])).toEqual([]);
  });

  it('records each once (a replay records nothing new), finds it by id and deletes it past the retention', async () => {
    const [a, b, c] = [testJobId(), testJobId(), testJobId()];
    expect(
      await recordLostJobs(t.pool, [
        { id: a, model: 'mlp' },
        { id: b, model: 'mlp' },
      ]),
    ).toEqual(new Set([a, b]));
    expect(
      await recordLostJobs(t.pool, [
        { id: b, model: 'other' },
        { id: c, model: 'cnn' },
      ]),
    ).toEqual(new Set([c]));
    expect(await recordLostJobs(t.pool, [])).toEqual(new Set());

    const found = await findLostJob(t.pool, b);
    expect(found).toMatchObject({ id: b, model: 'mlp' });
    expect(Math.abs(found!.lostAt.getTime() - Date.now())).toBeLessThan(60_000);
    expect(await findLostJob(t.pool, testJobId())).toBeUndefined();

    await t.pool.query("UPDATE lost_jobs SET lost_at = now() - interval '2 days' WHERE id = ANY($1::uuid[])", [[a, b]]);
    expect(await deleteLostJobsBefore(t.pool, new Date(Date.now() - 86_400_000), { chunkRows: 1 })).toBe(2);
    expect(await findLostJob(t.pool, a)).toBeUndefined();
    expect(await findLostJob(t.pool, c)).toMatchObject({ id: c, model: 'cnn' });
  });
});
