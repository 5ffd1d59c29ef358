import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { encodeTensorBase64 } from '@inferq/contracts';
import { createLogger } from '@inferq/core';
import { completeJobs, expireRunningJobs, failJobs, findJob, findLostJob, insertJobs, startJobs } from '@inferq/db';
import type { ModelSession } from '@inferq/inference';
import { createJobAck, type AckOutcome } from '@inferq/queue';
import { createTensorStore } from '@inferq/storage';
import { createTestContext, insertTestOwner, newTestJob, testBatchRun, type TestContext, testJobId } from '@inferq/test-utils';
import { createBatchStore } from './batch-store.ts';
import { createInferenceBatchRunner, type InferenceBatchDeps } from './inference-batch-runner.ts';
import { createInferenceProfiles } from './inference-profiles.ts';
import type { ModelSessions } from '../sessions/model-sessions.ts';
import type { PendingJob } from './pending-job.ts';

// The inference batch runner over real Postgres with a stand-in session and a profile
// filled by hand (a fake of what the device measured): a job its batch would
// finish after its deadline is expired before it runs.

let ctx: TestContext;
let ownerKeyId: string;
beforeAll(async () => {
  ctx = await createTestContext();
  ownerKeyId = await insertTestOwner(ctx.pool, 'runner-test');
});
afterAll(() => ctx?.close());

const input = { name: 'x', datatype: 'FP32' as const, shape: [1, 4], bytes: 16, b64: encodeTensorBase64(new Uint8Array(16)) };

async function queuedJob(): Promise<string> {
  const job = newTestJob(ownerKeyId, { modelName: 'slow', inputs: [input] });
  await insertJobs(ctx.pool, [job]);
  return job.id;
}

/** Each batch's jobs' first input bytes, as the stand-in session got them. */
const sessionInputs: number[][][] = [];

/** A session whose every batch "runs" (once `gate` opens) and returns one output per job. */
function standInSessions(ran: string[][], gate?: Promise<void>): ModelSessions {
  const session = {
    provider: 'cpu',
    failedProviders: [],
    inputNames: ['x'],
    outputNames: ['y'],
    async infer(jobs: Array<{ inputs: Array<{ data: Uint8Array }> }>) {
      ran.push(jobs.map((_, i) => String(i)));
      sessionInputs.push(jobs.map((j) => [...j.inputs[0]!.data]));
      await gate;
      return {
        inferMs: 5,
        mode: 'batched',
        results: jobs.map(() => ({ ok: true, outputs: [{ name: 'y', datatype: 'FP32', shape: [1, 1], data: new Uint8Array(4) }] })),
      };
    },
    async close() {},
  } as unknown as ModelSession;
  return { getSession: async () => session, discard: async () => {} } as unknown as ModelSessions;
}

/** A promise the test opens when it likes: a batch's run held until then. */
function makeGate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

/** Every handle used a second time, by any test: none may be. */
const repeatedAcks: unknown[] = [];
afterAll(() => expect(repeatedAcks).toEqual([]));

function pending(jobId: string, deadlineAt?: number): PendingJob & { outcome: Promise<boolean> } {
  const ack = createJobAck(jobId, (...use) => repeatedAcks.push(use));
  return {
    jobId,
    model: 'slow',
    modelVersion: 1,
    priority: 'normal',
    createdAtMs: Date.now(),
    attemptsMade: 0,
    maxAttempts: 3,
    deadlineAt,
    ack,
    outcome: ack.outcome.then((o) => o.kind === 'ack'),
  };
}

function runner(deadlines: boolean, ran: string[][], gate?: Promise<void>, runningMarkMs?: number, carried?: InferenceBatchDeps['carried']) {
  const profiles = createInferenceProfiles();
  // The device takes 10 s per item here: nothing with a deadline a few seconds away can make it.
  for (let i = 0; i < 3; i++) profiles.of('slow').record(1, 10_000);
  const tensors = createTensorStore({ storage: ctx.storage, inlineMaxBytes: 1024 });
  return createInferenceBatchRunner({
    store: createBatchStore({ pool: ctx.pool, storage: ctx.storage, tensors, workerId: 'w-test' }),
    sessions: standInSessions(ran, gate),
    tensors,
    workerId: 'w-test',
    device: 'cpu',
    profiles,
    deadlines,
    logger: createLogger({ service: 'test', level: 'silent' }),
    runningMarkMs,
    carried,
  });
}

describe('inputs carried in the queue entry (QUEUE_CARRIED_INPUTS_MB)', () => {
  it("runs a job on the inputs its entry carries, which the claim does not read from Postgres; a job without runs on its row's", async () => {
    const [carried, plain] = [await queuedJob(), await queuedJob()];
    const claim = await startJobs(ctx.pool, { ids: [carried, plain], carried: new Set([carried]), workerId: 'w', batchId: randomUUID(), batchSize: 2 });
    expect(claim.get(carried)).toEqual({ attempt: 1, nodeFaults: [] });
    expect(claim.get(plain)!.inputs).toMatchObject([{ name: 'x', bytes: 16 }]);
    // Redis has the first job's bytes (sevens, where its row holds zeros) and not the third's, whose row's are read.
    const sevens = Buffer.alloc(16, 7);
    const expired = await queuedJob();
    const header = [{ name: 'x', datatype: 'FP32' as const, shape: [1, 4], bytes: 16, at: 0 }];
    const jobs = [{ ...pending(carried), carriedInputs: header }, pending(plain), { ...pending(expired), carriedInputs: header }];
    const taken: string[][] = [];
    const redis = {
      take: async (_: string, ids: readonly string[]) => {
        taken.push([...ids]);
        return ids.map((id) => (id === carried ? sevens : null));
      },
    };
    sessionInputs.length = 0;
    await runner(false, [], undefined, undefined, redis).run(jobs);
    expect(await Promise.all(jobs.map((j) => j.outcome))).toEqual([true, true, true]);
    expect(sessionInputs).toEqual([[[...sevens], [...new Uint8Array(16)], [...new Uint8Array(16)]]]);
    expect((await findJob(ctx.pool, carried, null))!.status).toBe('succeeded');
    // Only the jobs whose entries carried inputs are asked for, once (the take drops them).
    expect(taken).toEqual([[carried, expired]]);
  });

  it('claims a batch whose inputs are all carried as one that reads them: past its deadline expires, marked by another batch is taken over', async () => {
    const claimBoth = async (carried: boolean) => {
      const [queued, late, marked, canceled] = [await queuedJob(), await queuedJob(), await queuedJob(), await queuedJob()];
      await ctx.pool.query(`UPDATE jobs SET deadline_at = now() - interval '1 second' WHERE id = $1`, [late]);
      await ctx.pool.query(`UPDATE jobs SET status = 'running', attempts = 1, batch_id = $2 WHERE id = $1`, [marked, randomUUID()]);
      await ctx.pool.query(`UPDATE jobs SET status = 'canceled', finished_at = now() WHERE id = $1`, [canceled]);
      const ids = [queued, late, marked, canceled];
      const batchId = randomUUID();
      const claim = await startJobs(ctx.pool, { ids, ...(carried && { carried: new Set(ids) }), workerId: 'w', batchId, batchSize: 4 });
      const rows = (await ctx.pool.query('SELECT id, status, attempts, batch_id FROM jobs WHERE id = ANY($1::uuid[])', [ids])).rows;
      const state = (id: string) => rows.find((r) => r.id === id);
      return {
        claimed: ids.map((id) => (claim.has(id) ? { attempt: claim.get(id)!.attempt, read: claim.get(id)!.inputs !== undefined } : null)),
        rows: [state(late).status, state(marked).batch_id === batchId, state(marked).attempts],
      };
    };
    expect(await claimBoth(true)).toEqual({
      claimed: [{ attempt: 1, read: false }, null, { attempt: 2, read: false }, null],
      rows: ['expired', true, 2],
    });
    expect(await claimBoth(false)).toEqual({
      claimed: [{ attempt: 1, read: true }, null, { attempt: 2, read: true }, null],
      rows: ['expired', true, 2],
    });
  });
});

describe('batch runner with deadlines', () => {
  it('expires unrun a job its batch would finish after its deadline, and runs the others', async () => {
    const [late, free] = [await queuedJob(), await queuedJob()];
    const ran: string[][] = [];
    const jobs = [pending(late, Date.now() + 3_000), pending(free)];
    await runner(true, ran).run(jobs);
    expect(await Promise.all(jobs.map((j) => j.outcome))).toEqual([true, true]);
    expect(ran).toEqual([['0']]);
    expect(await findJob(ctx.pool, late, null)).toMatchObject({
      status: 'expired',
      errorCode: 'DEADLINE_EXCEEDED',
      errorMessage: expect.stringMatching(/cannot finish by its deadline: the batch is expected to take \d+/),
      deviceMs: null,
    });
    expect(await findJob(ctx.pool, free, null)).toMatchObject({ status: 'succeeded', items: 1 });
  });

  it('runs it anyway with deadline scheduling off (DEADLINE_SCHEDULING=false)', async () => {
    const id = await queuedJob();
    const ran: string[][] = [];
    const job = pending(id, Date.now() + 3_000);
    await runner(false, ran).run([job]);
    expect(await job.outcome).toBe(true);
    expect(ran).toHaveLength(1);
    expect((await findJob(ctx.pool, id, null))!.status).toBe('succeeded');
  });
});

describe('a stale batch (its lock expired while it ran; another worker claimed the jobs again)', () => {
  it("has its late results refused: the newer attempt's outputs, batch, worker and device time stand", async () => {
    const id = await queuedJob();
    const { opened: gate, open } = makeGate();
    const stale = pending(id);
    const running = runner(false, [], gate).run([stale]);
    await vi.waitFor(async () => expect((await findJob(ctx.pool, id, null))?.status).toBe('running'));
    const { batch_id: staleBatch } = (await ctx.pool.query('SELECT batch_id FROM jobs WHERE id = $1', [id])).rows[0];

    // Another worker's attempt claims the job and stores its result first.
    const newer = randomUUID();
    const claim = await startJobs(ctx.pool, { ids: [id], workerId: 'w-other', batchId: newer, batchSize: 1 });
    // The stale batch's claim is written (it ran for a while): the newer one takes the job over, as its next attempt.
    expect(claim.get(id)?.attempt).toBe(2);
    const outputs = [{ name: 'y', datatype: 'FP32' as const, shape: [1, 1], bytes: 4, b64: encodeTensorBase64(new Uint8Array([1, 2, 3, 4])) }];
    const done = [{ attempt: 2, id, outputs, inferMs: 7, items: 1, deviceMs: 7 }];
    expect(await completeJobs(ctx.pool, testBatchRun(newer, 'w-other'), done)).toEqual(new Set([id]));

    open();
    await running;
    expect(await stale.outcome).toBe(true);
    const row = (await ctx.pool.query('SELECT status, batch_id, worker_id, device_ms, outputs FROM jobs WHERE id = $1', [id])).rows[0];
    expect(row).toMatchObject({ status: 'succeeded', batch_id: newer, worker_id: 'w-other', device_ms: 7, outputs });
    expect(staleBatch).not.toBe(newer);

    // Failures and expiries of the stale batch are fenced the same way.
    await failJobs(ctx.pool, [{ id, code: 'INFERENCE_FAILED', message: 'late', final: true, attempt: 1 }], testBatchRun(staleBatch));
    await expireRunningJobs(ctx.pool, testBatchRun(staleBatch), [{ id, attempt: 1, message: 'late' }]);
    expect((await findJob(ctx.pool, id, null))?.status).toBe('succeeded');
  });
});

describe('claims: a read, written only for a batch that runs a while', () => {
  const row = async (id: string) =>
    (await ctx.pool.query('SELECT status, attempts, worker_id, batch_id, batch_size, started_at, queue_ms FROM jobs WHERE id = $1', [id])).rows[0];

  it('a quick batch writes no claim: its job goes from queued to succeeded, with its attempt, batch, worker and start', async () => {
    const id = await queuedJob();
    const { opened: gate, open } = makeGate();
    const ran: string[][] = [];
    const job = pending(id);
    const running = runner(false, ran, gate, 60_000).run([job]);
    await vi.waitFor(() => expect(ran).toHaveLength(1));
    expect(await row(id)).toMatchObject({ status: 'queued', attempts: 0, batch_id: null, started_at: null });
    open();
    await running;
    expect(await job.outcome).toBe(true);
    const done = await row(id);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, worker_id: 'w-test', batch_size: 1, batch_id: expect.any(String) });
    expect(done.started_at).toBeInstanceOf(Date);
    expect(done.queue_ms).toBeGreaterThanOrEqual(0);
  });

  it('a batch that runs past runningMarkMs shows its job running, then finishes it', async () => {
    const id = await queuedJob();
    const { opened: gate, open } = makeGate();
    const job = pending(id);
    const running = runner(false, [], gate, 20).run([job]);
    await vi.waitFor(async () => expect(await row(id)).toMatchObject({ status: 'running', attempts: 1, worker_id: 'w-test' }));
    const { batch_id: marked, started_at: startedAt } = await row(id);
    open();
    await running;
    expect(await row(id)).toMatchObject({ status: 'succeeded', attempts: 1, batch_id: marked, started_at: startedAt });
  });

  it('two batches holding one job unmarked (a lock that expired): the first to finish stands, the other is refused', async () => {
    const id = await queuedJob();
    const { opened: staleGate, open: openStale } = makeGate();
    const stale = pending(id);
    const staleRun = runner(false, [], staleGate, 60_000).run([stale]);
    await vi.waitFor(async () => expect(await row(id)).toMatchObject({ status: 'queued' }));
    const newer = pending(id);
    await runner(false, [], undefined, 60_000).run([newer]);
    const finished = await row(id);
    expect(finished).toMatchObject({ status: 'succeeded', attempts: 1 });
    openStale();
    await staleRun;
    expect(await stale.outcome).toBe(true);
    expect(await row(id)).toEqual(finished);
  });
});

describe("each queue job's handle is used once", () => {
  it('a step that fails after some jobs were settled fails only the others: a job already acknowledged is not failed again', async () => {
    const [gone, id] = [randomUUID(), await queuedJob()];
    // A session whose thread dies mid-batch.
    const dead = { provider: 'cpu', infer: () => Promise.reject(new Error('thread died')), close: async () => {} } as unknown as ModelSession;
    const profiles = createInferenceProfiles();
    const tensors = createTensorStore({ storage: ctx.storage, inlineMaxBytes: 1024 });
    const batch = createInferenceBatchRunner({
      store: createBatchStore({ pool: ctx.pool, storage: ctx.storage, tensors, workerId: 'w-test' }),
      sessions: { getSession: async () => dead, discard: async () => {} } as unknown as ModelSessions,
      tensors,
      workerId: 'w-test',
      device: 'cpu',
      profiles,
      deadlines: false,
      logger: createLogger({ service: 'test', level: 'silent' }),
    });
    // `gone` has no row (deleted, or finished before a replay): acknowledged at the claim, before the run fails.
    const jobs = [pending(gone), pending(id)];
    await batch.run(jobs);
    const outcomes: AckOutcome[] = await Promise.all(jobs.map((j) => j.ack.outcome));
    expect(outcomes).toEqual([{ kind: 'ack' }, { kind: 'fail', error: new Error('thread died') }]);
    expect((await findJob(ctx.pool, id, null))?.status).toBe('queued');
  });
});

describe('entries whose job has no row at all (the record lost them: a failover to an asynchronous standby)', () => {
  it('are acknowledged unrun like a canceled job, but recorded and counted once; without lost_jobs (not migrated yet) still acknowledged', async () => {
    const [live, canceled, lost] = [await queuedJob(), await queuedJob(), testJobId()];
    await ctx.pool.query("UPDATE jobs SET status = 'canceled', finished_at = now() WHERE id = $1", [canceled]);
    const counted: number[] = [];
    const warned: unknown[] = [];
    const errors: unknown[] = [];
    const logger = createLogger({ service: 'test', level: 'silent' });
    // Each batch's logger keeps what it warns and errs of.
    logger.child = () =>
      Object.assign(Object.create(logger) as object, { warn: (o: unknown) => void warned.push(o), error: (o: unknown) => void errors.push(o) }) as never;
    const tensors = createTensorStore({ storage: ctx.storage, inlineMaxBytes: 1024 });
    const ran: string[][] = [];
    const batch = createInferenceBatchRunner({
      store: createBatchStore({ pool: ctx.pool, storage: ctx.storage, tensors, workerId: 'w-test' }),
      sessions: standInSessions(ran),
      tensors,
      workerId: 'w-test',
      device: 'cpu',
      profiles: createInferenceProfiles(),
      deadlines: false,
      logger,
      metrics: { batchStarted() {}, batchRan() {}, jobsFinished() {}, jobsReleased() {}, jobsRecordLost: (_model, n) => void counted.push(n) },
    });
    const jobs = [pending(live), pending(canceled), pending(lost)];
    await batch.run(jobs);
    expect(await Promise.all(jobs.map((j) => j.outcome))).toEqual([true, true, true]);
    expect(ran).toHaveLength(1);
    expect(ran[0]).toHaveLength(1);
    expect((await findJob(ctx.pool, live, null))?.status).toBe('succeeded');
    expect(await findLostJob(ctx.pool, lost)).toMatchObject({ id: lost, model: 'slow' });
    expect(await findLostJob(ctx.pool, canceled)).toBeUndefined();
    expect(counted).toEqual([1]);
    expect(warned).toEqual([{ jobIds: [lost], lost: 1, recorded: 1 }]);

    // The same entry again (a crash before its acknowledgement): acknowledged, not counted twice.
    const replay = pending(lost);
    await batch.run([replay]);
    expect(await replay.outcome).toBe(true);
    expect(counted.reduce((a, b) => a + b, 0)).toBe(1);

    // A worker newer than the schema (a rolling update): the loss cannot be recorded, the entry is acknowledged as before.
    await ctx.pool.query('ALTER TABLE lost_jobs RENAME TO lost_jobs_away');
    try {
      const unrecorded = pending(testJobId());
      await batch.run([unrecorded]);
      expect(await unrecorded.outcome).toBe(true);
      expect(errors).toHaveLength(1);
    } finally {
      await ctx.pool.query('ALTER TABLE lost_jobs_away RENAME TO lost_jobs');
    }
  });
});
