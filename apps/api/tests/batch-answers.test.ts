import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  insertBulkBatch,
  insertBulkBatchLines,
  leaseBulkBatch,
  readBulkBatchLines,
  readBulkBatchParts,
  recordBulkBatchSubmits,
  type BulkBatchRecord,
} from '@inferq/db';
import { fileObjectKey } from '@inferq/storage';
import { createTestContext, insertTestOwner, type TestContext } from '@inferq/test-utils';
import { createBatchAnswers, LeaseLost } from '../src/batch-api/batch-answers.ts';
import { writeBatchFiles } from '../src/batch-api/batch-output.ts';

// A batch's lines are answered into parts of its files' multipart uploads as
// they end, each line once: a runner that lost the batch's lease records
// nothing more, its successor answers only the lines no part holds, and the
// finalize completes each upload with the rest as its last part.

let t: TestContext;
let owner: string;
beforeAll(async () => {
  t = await createTestContext();
  owner = await insertTestOwner(t.pool, 'batch-answers');
});
afterAll(() => t?.close());

const handler = { respond: async () => ({}) };
const LINES = 6;

async function newBatch(): Promise<BulkBatchRecord> {
  const batch = await insertBulkBatch(t.pool, {
    id: `batch_${randomBytes(16).toString('hex')}`,
    ownerKeyId: owner,
    endpoint: '/v1/jobs',
    inputFileId: 'file-input',
    completionWindow: '24h',
    metadata: null,
    createdAt: new Date(),
    expiresAt: new Date(Date.now() + 86_400_000),
    outputExpiresAfterS: null,
  });
  const lines = Array.from({ length: LINES }, (_, i) => i + 1);
  await insertBulkBatchLines(
    t.pool,
    batch.id,
    lines,
    lines.map((l) => `c-${l}`),
    LINES,
  );
  // Lines 1 to 3 refused at submit; 4 to 6 never submitted.
  const error = { code: 'INVALID_INPUT', message: 'bad input', status: 400 };
  await recordBulkBatchSubmits(
    t.pool,
    batch.id,
    [1, 2, 3].map((line) => ({ line, jobIds: null, answer: null, error })),
    3,
  );
  return batch;
}

const lease = async (runner: string) => (await leaseBulkBatch(t.pool, runner, 60_000, []))!;
const expireLease = (id: string) => t.pool.query(`UPDATE bulk_batches SET lease_until = now() - interval '1 second' WHERE id = $1`, [id]);

describe("a batch's answers", () => {
  it('are written as parts while it runs, each line once across a takeover, and made into its files at the end', async () => {
    const batch = await newBatch();
    await lease('runner-a');
    // A part a line: each answer is uploaded as it comes.
    const first = createBatchAnswers({ pool: t.pool, storage: t.storage, handler }, batch, 'runner-a', 1);
    first.answer(await readBulkBatchLines(t.pool, batch.id, 0, 2), 'completed');
    await first.settled();
    expect(await readBulkBatchParts(t.pool, batch.id)).toMatchObject([
      { part: 1, file: 'errors', lines: 1 },
      { part: 2, file: 'errors', lines: 1 },
    ]);
    expect((await readBulkBatchLines(t.pool, batch.id, 0, LINES, true)).map((l) => l.line)).toEqual([3, 4, 5, 6]);

    // Another runner takes the batch over: the first one takes no part number more, so uploads nothing.
    await expireLease(batch.id);
    const taken = await lease('runner-b');
    expect(taken.errorsUploadId).not.toBeNull();
    first.answer(await readBulkBatchLines(t.pool, batch.id, 2, 1), 'completed');
    await expect(first.settled()).rejects.toBeInstanceOf(LeaseLost);
    expect(() => first.answer([], 'completed')).toThrow(LeaseLost);
    expect(await readBulkBatchParts(t.pool, batch.id)).toHaveLength(2);

    const second = createBatchAnswers({ pool: t.pool, storage: t.storage, handler }, taken, 'runner-b');
    const written = await writeBatchFiles({ pool: t.pool, storage: t.storage }, second, taken, 'cancelled');
    expect(written).toEqual({ outputFileId: null, errorFileId: `file-${batch.id.slice('batch_'.length)}-errors`, completed: 0, failed: LINES });
    const text = Buffer.from(await t.storage.getObject(fileObjectKey(written.errorFileId!))).toString();
    const answers = text
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { custom_id: string; response: { status_code: number } | null; error: { code: string } | null });
    expect(answers.map((a) => a.custom_id).sort()).toEqual(['c-1', 'c-2', 'c-3', 'c-4', 'c-5', 'c-6']);
    for (const a of answers) {
      if (['c-1', 'c-2', 'c-3'].includes(a.custom_id)) expect(a.response?.status_code).toBe(400);
      else expect(a.error?.code).toBe('batch_cancelled');
    }

    // A finalize taken over after the upload was completed (the file not yet recorded) records the same file.
    await t.pool.query('DELETE FROM files WHERE id = $1', [written.errorFileId]);
    const again = createBatchAnswers({ pool: t.pool, storage: t.storage, handler }, taken, 'runner-b');
    expect(await writeBatchFiles({ pool: t.pool, storage: t.storage }, again, taken, 'cancelled')).toEqual(written);
    expect(Buffer.from(await t.storage.getObject(fileObjectKey(written.errorFileId!))).toString()).toBe(text);
  });
});
