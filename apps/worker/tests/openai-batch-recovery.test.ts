import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// A batch outlives the API process advancing it and the worker running its
// jobs, and ends as OpenAI's do when its window passes: every line answered
// exactly once each way.

const LINES = 300;
let stack: Stack;
let worker: TestProcess;
/** The API the tests talk to: the second one once the first is killed. */
let api: string;
beforeAll(async () => {
  // Short leases, so a killed API's batch is taken over in seconds; a small window of jobs, so the kill lands mid-run.
  stack = await startStack({ apiEnv: { BATCH_LEASE_MS: '2000', BATCH_JOBS_IN_FLIGHT: '40' } });
  await stack.registerModel('mlp');
  worker = await stack.startWorker();
  await stack.waitUntilServed('mlp');
  api = stack.baseUrl;
});
afterAll(() => stack?.close());

const auth = { authorization: `Bearer ${ADMIN_KEY}` };
const line = (customId: string, seed: number) => JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/jobs', body: mlpJob(seed) });

async function createBatch(baseUrl: string, lines: string[]): Promise<string> {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([lines.join('\n')]), 'requests.jsonl');
  const file = (await (await fetch(`${baseUrl}/v1/files`, { method: 'POST', headers: auth, body: form })).json()) as { id: string };
  const res = await fetch(`${baseUrl}/v1/batches`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ input_file_id: file.id, endpoint: '/v1/jobs', completion_window: '24h' }),
  });
  return ((await res.json()) as { id: string }).id;
}

const getBatch = async (baseUrl: string, id: string) => (await (await fetch(`${baseUrl}/v1/batches/${id}`, { headers: auth })).json()) as Record<string, any>;
const jobsOf = async (id: string, status?: string) =>
  (
    await stack.ctx.pool.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs WHERE metadata->>'inferq.batch_id' = $1 AND ($2::text IS NULL OR status = $2)`,
      [id, status ?? null],
    )
  ).rows[0]!.n;
const ended = (b: Record<string, any>) => ['completed', 'failed', 'expired', 'cancelled'].includes(b.status);
const fileLines = async (baseUrl: string, fileId: string) =>
  (await (await fetch(`${baseUrl}/v1/files/${fileId}/content`, { headers: auth })).text())
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as { custom_id: string; error: { code: string } | null });

describe('a batch across failures', () => {
  it('is taken over when the API advancing it is killed, and answers every line once', async () => {
    const id = await createBatch(
      stack.baseUrl,
      Array.from({ length: LINES }, (_, i) => line(`r-${i}`, i)),
    );
    await waitFor(async () => (await jobsOf(id)) >= 40, { timeoutMs: 30_000, what: 'the batch to submit its first jobs' });
    await stack.api.stop('SIGKILL');
    api = (await stack.startApi()).baseUrl;
    let batch: Record<string, any> = {};
    await waitFor(async () => ended((batch = await getBatch(api, id))), {
      timeoutMs: 90_000,
      intervalMs: 250,
      what: () => `the batch to end on the second API (${batch.status} ${JSON.stringify(batch.request_counts)})`,
    });
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: LINES, completed: LINES, failed: 0 }, error_file_id: null });
    expect(await jobsOf(id)).toBe(LINES);
    const output = await fileLines(api, batch.output_file_id);
    expect(output.map((o) => o.custom_id).sort()).toEqual(Array.from({ length: LINES }, (_, i) => `r-${i}`).sort());
  });

  it('survives its worker killed mid-run: the jobs it held run on the next one, and every line is answered once', async () => {
    const id = await createBatch(
      api,
      Array.from({ length: LINES }, (_, i) => line(`w-${i}`, i)),
    );
    await waitFor(async () => (await jobsOf(id, 'succeeded')) >= 40, { timeoutMs: 30_000, what: 'the batch to have results' });
    await worker.stop('SIGKILL');
    worker = await stack.startWorker();
    let batch: Record<string, any> = {};
    await waitFor(async () => ended((batch = await getBatch(api, id))), {
      timeoutMs: 120_000,
      intervalMs: 250,
      what: () => `the batch to end on the second worker (${batch.status} ${JSON.stringify(batch.request_counts)})`,
    });
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: LINES, completed: LINES, failed: 0 }, error_file_id: null });
    expect(await jobsOf(id)).toBe(LINES);
    const output = await fileLines(api, batch.output_file_id);
    expect(output.map((o) => o.custom_id).sort()).toEqual(Array.from({ length: LINES }, (_, i) => `w-${i}`).sort());
  });

  it('ends expired past its window: its queued jobs canceled, the lines not run in the error file', async () => {
    expect((await fetch(`${api}/v1/models/mlp/pause`, { method: 'POST', headers: auth })).status).toBe(200);
    try {
      const id = await createBatch(
        api,
        Array.from({ length: 10 }, (_, i) => line(`e-${i}`, i)),
      );
      await waitFor(async () => (await jobsOf(id)) === 10, { timeoutMs: 30_000, what: 'the batch to submit its jobs' });
      // Its window passes now (the shortest a client may ask for is an hour).
      await stack.ctx.pool.query(`UPDATE bulk_batches SET expires_at = now() WHERE id = $1`, [id]);
      let batch: Record<string, any> = {};
      await waitFor(async () => ended((batch = await getBatch(api, id))), { timeoutMs: 30_000, what: () => `the batch to expire (${batch.status})` });
      expect(batch).toMatchObject({ status: 'expired', output_file_id: null, request_counts: { total: 10, completed: 0, failed: 10 } });
      expect(batch.expired_at).toBeGreaterThanOrEqual(batch.created_at);
      const errors = await fileLines(api, batch.error_file_id);
      expect(errors.map((e) => [e.custom_id, e.error?.code])).toEqual(Array.from({ length: 10 }, (_, i) => [`e-${i}`, 'batch_expired']));
    } finally {
      await fetch(`${api}/v1/models/mlp/resume`, { method: 'POST', headers: auth });
    }
  });
});
