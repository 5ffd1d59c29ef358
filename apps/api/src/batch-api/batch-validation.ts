import type { Logger } from '@inferq/core';
import { findFile, insertBulkBatchLines, updateBulkBatch, type BulkBatchError, type BulkBatchRecord, type Pool } from '@inferq/db';
import type { Storage } from '@inferq/storage';
import type { BatchEndpointHandler } from './batch-endpoints.ts';
import { FILE_ERRORS_MAX, parseBatchLine, readLines } from './batch-lines.ts';

// A batch's file checked line by line while its first lines already run:
// every line must be a request of the batch's endpoint with a custom_id of
// its own, recorded (bulk_batch_requests) a chunk at a time; the submitter
// submits only lines recorded here, so the first result comes a moment after
// the batch is created whatever the file's size. A file refused (a bad line,
// a repeated custom_id, too many lines) ends the batch `failed`: the runner
// cancels what was submitted of it. Recording a line again (a runner that
// took the batch over validates from the start) changes nothing.

/** Lines recorded at once: the first ones can run after this many are checked. */
const CHUNK = 1000;

export interface ValidationDeps {
  pool: Pool;
  storage: Pick<Storage, 'getObjectStream'>;
  /** BATCH_MAX_LINES */
  maxLines: number;
}

export interface Validation {
  /** The last line recorded (the submitter's bound): Infinity once the whole file is valid; throws what stopped the check. */
  through(): number;
  /** The file's errors as soon as it is refused (its first); undefined while it is valid so far. */
  refused(): BulkBatchError[] | undefined;
  /** Resolves once the check ends: the whole file read, refused, or the batch cancelling. */
  readonly done: Promise<void>;
}

/** Starts checking the batch's file; `check` renews its lease (and shows a cancel). The batch goes in_progress when the file is valid. */
export function startValidation(
  deps: ValidationDeps,
  batch: BulkBatchRecord,
  endpoint: { path: string; handler: BatchEndpointHandler },
  check: () => Promise<BulkBatchRecord>,
  log: Logger,
): Validation {
  const errors: BulkBatchError[] = [];
  let through = 0;
  let failure: unknown;

  async function validate(): Promise<void> {
    const file = await findFile(deps.pool, batch.inputFileId, null);
    if (!file) return void errors.push({ code: 'file_not_found', message: `file ${batch.inputFileId} was deleted`, line: null, param: 'input_file_id' });
    let lines: number[] = [];
    let ids: string[] = [];
    let total = 0;
    /** Records the chunk; false when the batch is cancelling (the check stops). */
    const record = async (): Promise<boolean> => {
      if (lines.length > 0 && !(await insertBulkBatchLines(deps.pool, batch.id, lines, ids, total)))
        errors.push({
          code: 'duplicate_custom_id',
          message: `a custom_id on lines ${lines[0]} to ${lines.at(-1)} repeats an earlier one`,
          line: null,
          param: 'custom_id',
        });
      else through = lines.at(-1) ?? through;
      lines = [];
      ids = [];
      return (await check()).status !== 'cancelling';
    };
    for await (const { line, text } of readLines(await deps.storage.getObjectStream(file.objectKey))) {
      const parsed = parseBatchLine(text, line, endpoint);
      if ('code' in parsed) errors.push(parsed);
      else if (++total > deps.maxLines) errors.push({ code: 'too_many_lines', message: `the file has more than ${deps.maxLines} requests`, line, param: null });
      else if (errors.length === 0) {
        lines.push(line);
        ids.push(parsed.customId);
      }
      if (errors.length >= FILE_ERRORS_MAX || (total > deps.maxLines && errors.length > 0)) break;
      if (lines.length >= CHUNK && !(await record())) return;
    }
    if (errors.length === 0 && !(await record())) return;
    if (errors.length === 0 && total === 0) errors.push({ code: 'empty_file', message: 'the file has no requests', line: null, param: 'input_file_id' });
    if (errors.length > 0) return void log.info({ errors: errors.length }, 'batch file refused');
    await updateBulkBatch(deps.pool, batch.id, { status: 'in_progress', total }, ['validating']);
    through = Infinity;
  }

  const done = validate().catch((err: unknown) => void (failure = err));
  return {
    through() {
      if (failure !== undefined) throw failure;
      return through;
    },
    refused: () => (errors.length > 0 ? errors : undefined),
    done,
  };
}
