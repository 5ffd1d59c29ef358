import { readFile, writeFile } from 'node:fs/promises';
import cliProgress from 'cli-progress';
import pRetry from 'p-retry';
import type { SubmitJobBody } from '@inferq/contracts';
import { isInferqError } from '../errors.ts';
import type { InferqClient } from '../client.ts';
import { emit, integerOption, requiredOption, stringOption, type Command, type CommandContext } from './command.ts';

export type BulkLineResult = { line: number; id: string } | { line: number; code: string; detail: string };

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
 * (429 QUEUE_FULL or RATE_LIMITED, 503). A lost connection is sent again only
 * under an idempotency key, since the first try may have been accepted.
 */
async function submitLine(client: InferqClient, line: number, text: string, idempotencyPrefix: string | undefined): Promise<BulkLineResult> {
  let body: SubmitJobBody;
  try {
    body = JSON.parse(text) as SubmitJobBody;
  } catch (err) {
    return { line, code: 'MALFORMED_LINE', detail: err instanceof Error ? err.message : String(err) };
  }
  const idempotencyKey = idempotencyPrefix === undefined ? undefined : `${idempotencyPrefix}:${line}`;
  try {
    const accepted = await pRetry(() => client.jobs.submit(body, { idempotencyKey }), {
      retries: 6,
      minTimeout: 200,
      maxTimeout: 5000,
      shouldRetry: ({ error }) => isInferqError(error) && error.retryable && (error.status !== 0 || idempotencyKey !== undefined),
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
    'jobs bulk --file JOBS.jsonl [--concurrency N] [--out RESULTS.jsonl] [--idempotency-prefix P]   (one job body per line; exit status 1 when any is refused)',
  options: { file: { type: 'string' }, concurrency: { type: 'string' }, out: { type: 'string' }, 'idempotency-prefix': { type: 'string' } },
  async run(ctx) {
    const text = await readFile(requiredOption(ctx.values, 'file'), 'utf8');
    const lines = text
      .split('\n')
      .map((t, i) => ({ line: i + 1, text: t.trim() }))
      .filter((l) => l.text !== '');
    const concurrency = integerOption(ctx.values, 'concurrency', { min: 1, max: 1024 }) ?? 16;
    const prefix = stringOption(ctx.values, 'idempotency-prefix');
    const results: BulkLineResult[] = [];
    let accepted = 0;
    const progress = createProgress(ctx, lines.length);
    try {
      await forEachLimited(lines, concurrency, async ({ line, text: body }) => {
        const result = await submitLine(ctx.client, line, body, prefix);
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
