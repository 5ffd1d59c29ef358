import { v7 as uuidv7 } from 'uuid';
import type { BulkBatch, BatchEndpoint, BulkBatchList, CreateBulkBatchBody, ListBulkBatchesQuery } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findBulkBatch, findFile, insertBulkBatch, listBulkBatches, updateBulkBatch, type BulkBatchRecord, type Pool } from '@inferq/db';
import { ownerFilter, type Principal } from '../services/keys/api-keys-service.ts';

// Batch API batches (POST /v1/batches): created `validating`; the runners
// (bulk-batch-runner.ts) take them from there. A cancel only asks: the runner
// holding the batch cancels its queued jobs and writes what was done.

export interface BatchesService {
  create(principal: Principal, body: CreateBulkBatchBody): Promise<BulkBatch>;
  get(principal: Principal, id: string): Promise<BulkBatch>;
  list(principal: Principal, query: ListBulkBatchesQuery): Promise<BulkBatchList>;
  cancel(principal: Principal, id: string): Promise<BulkBatch>;
}

/** A new batch id, OpenAI-like (`batch_` and 32 hex digits), time-ordered. */
const newBatchId = (): string => `batch_${uuidv7().replaceAll('-', '')}`;

const seconds = (d: Date | null): number | null => (d === null ? null : Math.floor(d.getTime() / 1000));

const toBatchObject = (b: BulkBatchRecord): BulkBatch => ({
  id: b.id,
  object: 'batch',
  endpoint: b.endpoint as BatchEndpoint,
  errors: b.errors && { object: 'list', data: b.errors },
  input_file_id: b.inputFileId,
  completion_window: b.completionWindow,
  status: b.status,
  output_file_id: b.outputFileId,
  error_file_id: b.errorFileId,
  created_at: seconds(b.createdAt)!,
  in_progress_at: seconds(b.inProgressAt),
  expires_at: seconds(b.expiresAt)!,
  finalizing_at: seconds(b.finalizingAt),
  completed_at: seconds(b.completedAt),
  failed_at: seconds(b.failedAt),
  expired_at: seconds(b.expiredAt),
  cancelling_at: seconds(b.cancellingAt),
  cancelled_at: seconds(b.cancelledAt),
  request_counts: { total: b.total, completed: b.completed, failed: b.failed },
  metadata: b.metadata,
});

export function createBatchesService(deps: { pool: Pool; onCreated?(): void }): BatchesService {
  async function find(principal: Principal, id: string): Promise<BulkBatchRecord> {
    const batch = await findBulkBatch(deps.pool, id, ownerFilter(principal));
    if (!batch) throw new AppError('BATCH_NOT_FOUND', `batch ${id} does not exist`);
    return batch;
  }

  return {
    async create(principal, body) {
      const file = await findFile(deps.pool, body.input_file_id, principal.keyId);
      if (!file) throw new AppError('FILE_NOT_FOUND', `file ${body.input_file_id} does not exist`);
      if (file.purpose !== 'batch')
        throw new AppError('FILE_INVALID', `file ${file.id} has purpose ${file.purpose}; a batch reads a file uploaded with purpose batch`);
      const createdAt = new Date();
      const hours = Number(body.completion_window.slice(0, -1));
      const batch = await insertBulkBatch(deps.pool, {
        id: newBatchId(),
        ownerKeyId: principal.keyId,
        endpoint: body.endpoint,
        inputFileId: file.id,
        completionWindow: body.completion_window,
        metadata: body.metadata ?? null,
        createdAt,
        expiresAt: new Date(createdAt.getTime() + hours * 3_600_000),
        outputExpiresAfterS: body.output_expires_after?.seconds ?? null,
      });
      deps.onCreated?.();
      return toBatchObject(batch);
    },

    async get(principal, id) {
      return toBatchObject(await find(principal, id));
    },

    async list(principal, query) {
      const limit = query.limit ?? 20;
      const rows = await listBulkBatches(deps.pool, { ownerKeyId: ownerFilter(principal), after: query.after, limit: limit + 1 });
      const data = rows.slice(0, limit).map(toBatchObject);
      return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: rows.length > limit };
    },

    async cancel(principal, id) {
      await find(principal, id);
      const asked = await updateBulkBatch(deps.pool, id, { status: 'cancelling' }, ['validating', 'in_progress']);
      if (asked) return toBatchObject(asked);
      const batch = await find(principal, id);
      // Asked twice, or while its files are being written: the answer is where it is.
      if (batch.status === 'cancelling' || batch.status === 'cancelled' || batch.status === 'finalizing') return toBatchObject(batch);
      throw new AppError('BATCH_NOT_CANCELABLE', `batch ${id} has ended (${batch.status})`);
    },
  };
}
