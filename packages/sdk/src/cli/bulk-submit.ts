import { randomUUID } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import cliProgress from 'cli-progress';
import pRetry from 'p-retry';
import { isDataType, isFixedSizeDataType } from '@inferq/contracts';
import { isInferqError } from '../errors.ts';
import type { InferqClient } from '../client.ts';
import type { SubmitOptions } from '../jobs.ts';
import type { SubmitInput, SubmitRequest } from '../submit-body.ts';
import { isRetryableSubmitError } from '../submit-retry.ts';
import { emit, integerOption, requiredOption, stringOption, type Command, type CommandContext } from './command.ts';
import { binaryThresholdOption } from './jobs-commands.ts';
import { readTensorFile } from './tensor-files.ts';

type BulkLineResult = { line: number; id: string } | { line: number; code: string; detail: string };

/** Runs `task` for each item with at most `limit` in flight. */
async function forEachLimited<T>(items: readonly T[], limit: number, task: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) await task(items[next++]!);
    }),
  );
}

/**
 * Submits one line, sending it again while the server refuses it only for now
 * (429 QUEUE_FULL or RATE_LIMITED, 502, 503, 504) or does not answer. Every try
 * of a line carries one idempotency key (`--idempotency-prefix`:line, else a
 * UUID made for the line), since an unanswered try may have been accepted.
 * p-retry does the retrying here, with more patience than the SDK's default
 * for a backlog a bulk load fills; each SDK call is one try, timed out alike.
 */
async function submitLine(client: InferqClient, line: number, text: string, options: LineOptions): Promise<BulkLineResult> {
  let body: SubmitRequest;
  try {
    body = JSON.parse(text) as SubmitRequest;
  } catch (err) {
    return { line, code: 'MALFORMED_LINE', detail: err instanceof Error ? err.message : String(err) };
  }
  try {
    body = { ...body, inputs: await Promise.all((body.inputs ?? []).map((input) => readFileInput(input, options.baseDir))) };
  } catch (err) {
    return { line, code: 'TENSOR_FILE_INVALID', detail: err instanceof Error ? err.message : String(err) };
  }
  const idempotencyKey = options.idempotencyPrefix === undefined ? randomUUID() : `${options.idempotencyPrefix}:${line}`;
  try {
    const accepted = await pRetry(() => client.jobs.submit(body, { idempotencyKey, submitRetry: { attempts: 1 }, ...options.submit }), {
      retries: 6,
      minTimeout: 200,
      maxTimeout: 5000,
      shouldRetry: ({ error }) => isRetryableSubmitError(error),
      // Retry-After is the server's word on when to come back; p-retry's own backoff comes on top.
      onFailedAttempt: async ({ error }) => {
        if (isInferqError(error) && error.retryAfter) await new Promise((r) => setTimeout(r, error.retryAfter! * 1000));
      },
    });
    return { line, id: accepted.id };
  } catch (err) {
    if (isInferqError(err)) return { line, code: err.code, detail: err.detail ?? err.title };
    throw err;
  }
}

interface LineOptions {
  idempotencyPrefix: string | undefined;
  /** The JSONL file's folder: tensor `file` paths are relative to it. */
  baseDir: string;
  submit: Pick<SubmitOptions, 'binaryThresholdBytes'>;
}

/** A line's input `{ "name", "file": "x.npy" }` or `{ "name", "file": "x.bin", "datatype", "shape" }` read from the file; others as they are. */
async function readFileInput(input: SubmitInput, baseDir: string): Promise<SubmitInput> {
  const { file, name, datatype, shape } = input as { file?: unknown; name: string; datatype?: unknown; shape?: unknown };
  if (typeof file !== 'string') return input;
  const raw = isDataType(datatype) && isFixedSizeDataType(datatype) && Array.isArray(shape) ? { datatype, shape: shape as number[] } : undefined;
  return readTensorFile(name, resolve(baseDir, file), file.toLowerCase().endsWith('.npy') ? undefined : raw);
}

function createProgress(ctx: CommandContext, total: number) {
  // Redrawing in place needs a terminal; a pipe or a log file gets only the summary.
  if (ctx.config.json || !ctx.io.stderrIsTty) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: 'jobs [{bar}] {value}/{total}  accepted {accepted}  refused {refused}', hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0, { accepted: 0, refused: 0 });
  return {
    update: (done: number, accepted: number, refused: number) => bar.update(done, { accepted, refused }),
    stop: () => bar.stop(),
  };
}

export const jobsBulk: Command = {
  usage:
    'jobs bulk --file JOBS.jsonl [--concurrency N] [--out RESULTS.jsonl] [--idempotency-prefix P] [--binary-threshold BYTES|never]   ' +
    '(one job body per line; an input may name a tensor file, {"name":"x","file":"x.npy"}; exit status 1 when any is refused)',
  options: {
    file: { type: 'string' },
    concurrency: { type: 'string' },
    out: { type: 'string' },
    'idempotency-prefix': { type: 'string' },
    'binary-threshold': { type: 'string' },
  },
  async run(ctx) {
    const path = requiredOption(ctx.values, 'file');
    const text = await readFile(path, 'utf8');
    const lines = text
      .split('\n')
      .map((t, i) => ({ line: i + 1, text: t.trim() }))
      .filter((l) => l.text !== '');
    const concurrency = integerOption(ctx.values, 'concurrency', { min: 1, max: 1024 }) ?? 16;
    const lineOptions: LineOptions = {
      idempotencyPrefix: stringOption(ctx.values, 'idempotency-prefix'),
      baseDir: dirname(resolve(path)),
      submit: binaryThresholdOption(ctx.values),
    };
    const results: BulkLineResult[] = [];
    let accepted = 0;
    const progress = createProgress(ctx, lines.length);
    try {
      await forEachLimited(lines, concurrency, async ({ line, text: body }) => {
        const result = await submitLine(ctx.client, line, body, lineOptions);
        results.push(result);
        if ('id' in result) accepted++;
        progress.update(results.length, accepted, results.length - accepted);
      });
    } finally {
      progress.stop();
    }
    results.sort((a, b) => a.line - b.line);
    const out = stringOption(ctx.values, 'out');
    if (out !== undefined) await writeFile(out, results.map((r) => `${JSON.stringify(r)}\n`).join(''));
    const refusals = results.filter((r) => !('id' in r));
    const ids = results.flatMap((r) => ('id' in r ? [r.id] : []));
    emit(ctx, { accepted, refused: refusals.length, ids, refusals }, () => [
      `accepted ${accepted}  refused ${refusals.length}${out ? `  (results in ${out})` : ''}`,
      ...refusals.slice(0, 10).map((r) => `  line ${r.line}: ${'code' in r ? `${r.code} ${r.detail}` : ''}`),
      ...(refusals.length > 10 ? [`  … and ${refusals.length - 10} more`] : []),
    ]);
    return refusals.length === 0 ? 0 : 1;
  },
};
