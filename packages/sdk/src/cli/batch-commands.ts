import { createWriteStream } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import cliProgress from 'cli-progress';
import { BATCH_ENDPOINTS, FILE_EXPIRY_MAX_S, FILE_EXPIRY_MIN_S, type BatchEndpoint, type BulkBatch } from '@inferq/contracts';
import { batchProgress, isBatchEnded } from '../batches.ts';
import type { InferqClient } from '../client.ts';
import { emit, integerOption, onePositional, stringOption, type Command, type CommandContext, type OptionValues } from './command.ts';
import { UsageError } from './config.ts';
import { formatBulkBatch, formatBulkBatchSummary } from './format.ts';

// `inferq batch …`: the Batch API (POST /v1/files, /v1/batches) from a JSONL
// file of requests to its output and error files.

/** How often `batch submit --wait` asks for the batch. */
const POLL_MS = 1000;
const DEFAULT_LIST_LIMIT = 20;
/** The API's largest page. */
const PAGE_MAX = 100;

const FILE_OPTIONS = { output: { type: 'string' }, errors: { type: 'string' } } as const;
const FILE_USAGE = '[--output OUT.jsonl] [--errors ERR.jsonl]';

/** `--metadata KEY=VALUE`, repeatable; undefined when none is given. */
export function metadataOption(values: OptionValues): Record<string, string> | undefined {
  const pairs = (values.metadata as unknown as string[] | undefined) ?? [];
  if (pairs.length === 0) return undefined;
  const metadata: Record<string, string> = {};
  for (const pair of pairs) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new UsageError(`--metadata takes KEY=VALUE, not ${JSON.stringify(pair)}`);
    metadata[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return metadata;
}

function endpointOption(values: OptionValues): BatchEndpoint {
  const endpoint = stringOption(values, 'endpoint') ?? '/v1/jobs';
  if (!(BATCH_ENDPOINTS as readonly string[]).includes(endpoint)) throw new UsageError(`--endpoint must be one of ${BATCH_ENDPOINTS.join(', ')}`);
  return endpoint as BatchEndpoint;
}

/** `45s`, `3m 20s`, `2h 05m`. */
export function formatEta(seconds: number | undefined): string {
  if (seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

const formatRate = (perS: number | undefined) => (perS === undefined ? '–' : `${perS < 10 ? perS.toFixed(1) : Math.round(perS)}/s`);

/** A bar redrawn in place on a terminal; elsewhere (a pipe, a log, --json) one line on stderr per status. */
function createBatchProgress(ctx: CommandContext) {
  let since: { at: number; done: number } | undefined;
  let lastStatus: string | undefined;
  const fields = (batch: BulkBatch) => {
    // The rate counts from the first poll that found it running, so the validation does not drag it down.
    if (!since && batch.status === 'in_progress') since = { at: Date.now(), done: batch.request_counts.completed + batch.request_counts.failed };
    const p = since ? batchProgress(batch, since, Date.now()) : undefined;
    return { ...batch.request_counts, status: batch.status, rate: formatRate(p?.perS), timeLeft: formatEta(p?.etaS) };
  };
  if (ctx.config.json || !ctx.io.stderrIsTty) {
    return {
      update(batch: BulkBatch) {
        if (ctx.config.json || batch.status === lastStatus) return;
        lastStatus = batch.status;
        const { completed, failed, total } = batch.request_counts;
        ctx.io.stderr(`${new Date().toISOString()}  ${batch.status}  ${completed + failed}/${total} (${completed} completed, ${failed} failed)\n`);
      },
      stop: () => {},
    };
  }
  const bar = new cliProgress.SingleBar(
    {
      stream: process.stderr,
      // Our own rate and time left ({eta} is the bar's, from its last few updates): both since the batch started running.
      format: 'batch [{bar}] {value}/{total}  completed {completed}  failed {failed}  {rate}  ETA {timeLeft}  {status}',
      hideCursor: true,
      // Validating, the batch has no total yet: an empty bar rather than a full one.
      emptyOnZero: true,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  return {
    update(batch: BulkBatch) {
      const { completed, failed, total } = batch.request_counts;
      if (!started) bar.start(total, completed + failed, fields(batch));
      else {
        bar.setTotal(total);
        bar.update(completed + failed, fields(batch));
      }
      started = true;
    },
    stop() {
      if (started) bar.stop();
    },
  };
}

/** Waits for the batch to end, showing its progress; undefined when Ctrl-C stopped the wait (the batch goes on). */
async function waitWithProgress(ctx: CommandContext, id: string): Promise<BulkBatch | undefined> {
  const progress = createBatchProgress(ctx);
  const stop = new AbortController();
  const onInterrupt = () => stop.abort();
  process.once('SIGINT', onInterrupt);
  try {
    return await ctx.client.batches.wait(id, { pollMs: POLL_MS, signal: stop.signal, onProgress: (b) => progress.update(b) });
  } catch (err) {
    if (stop.signal.aborted) return undefined;
    throw err;
  } finally {
    progress.stop();
    process.removeListener('SIGINT', onInterrupt);
  }
}

/** A file's bytes to `path`, through a neighbour renamed at the end, so a failed download leaves no half file; none (null id): an empty file. */
async function download(client: InferqClient, fileId: string | null, path: string): Promise<void> {
  if (fileId === null) return writeFile(path, '');
  const partial = `${path}.partial`;
  try {
    const body = (await client.files.content(fileId)) as NodeReadableStream<Uint8Array>;
    await pipeline(Readable.fromWeb(body), createWriteStream(partial));
    await rename(partial, path);
  } catch (err) {
    await rm(partial, { force: true });
    throw err;
  }
}

/** Writes an ended batch's output and error files where `--output` and `--errors` say; the lines saying so (human mode). */
async function downloadFiles(ctx: CommandContext, batch: BulkBatch): Promise<string[]> {
  const lines: string[] = [];
  const targets = [
    { path: stringOption(ctx.values, 'output'), fileId: batch.output_file_id, what: 'output', placeholder: 'OUT', count: batch.request_counts.completed },
    { path: stringOption(ctx.values, 'errors'), fileId: batch.error_file_id, what: 'errors', placeholder: 'ERR', count: batch.request_counts.failed },
  ];
  for (const { path, fileId, what, count } of targets) {
    if (path === undefined) continue;
    await download(ctx.client, fileId, path);
    lines.push(`${what} written to ${path} (${fileId === null ? 'none' : `${count} request${count === 1 ? '' : 's'}`})`);
  }
  const left = targets.filter((t) => t.path === undefined && t.fileId !== null);
  if (left.length) lines.push(`download with: inferq batch get ${batch.id} ${left.map((t) => `--${t.what} ${t.placeholder}.jsonl`).join(' ')}`);
  return lines;
}

const hasFileOptions = (values: OptionValues) => values.output !== undefined || values.errors !== undefined;

export const batchSubmit: Command = {
  usage:
    `batch submit <requests.jsonl> [--endpoint ${BATCH_ENDPOINTS.join('|')}] [--window 24h] [--metadata KEY=VALUE …] [--expires-after SECONDS] ` +
    `[--wait ${FILE_USAGE}]   ` +
    '(uploads the file, creates a batch over it and prints its id; --expires-after: when the server deletes the uploaded file and the ' +
    "batch's output and error files, 3600–2592000 s from each one's creation; --wait shows its progress, writes its output and error files, " +
    'and exits 0 only when it completed)',
  options: {
    endpoint: { type: 'string' },
    window: { type: 'string' },
    metadata: { type: 'string', multiple: true },
    'expires-after': { type: 'string' },
    wait: { type: 'boolean' },
    ...FILE_OPTIONS,
  },
  async run(ctx) {
    const path = onePositional(ctx.args, 'requests file (JSONL)');
    const endpoint = endpointOption(ctx.values);
    const metadata = metadataOption(ctx.values);
    const wait = ctx.values.wait === true;
    if (!wait && hasFileOptions(ctx.values)) throw new UsageError('--output and --errors go with --wait (or `inferq batch get <id> --output …` once it ended)');
    const expiresAfterS = integerOption(ctx.values, 'expires-after', { min: FILE_EXPIRY_MIN_S, max: FILE_EXPIRY_MAX_S });
    const file = await ctx.client.files.upload(path, { expiresAfterS });
    if (!ctx.config.json) ctx.io.stderr(`uploaded ${file.filename}: ${file.id} (${file.bytes} bytes)\n`);
    const created = await ctx.client.batches.create({
      input_file_id: file.id,
      endpoint,
      completion_window: stringOption(ctx.values, 'window') ?? '24h',
      ...(metadata && { metadata }),
      ...(expiresAfterS !== undefined && { output_expires_after: { anchor: 'created_at', seconds: expiresAfterS } }),
    });
    if (!wait) {
      emit(ctx, created, () => [created.id]);
      return 0;
    }
    if (!ctx.config.json) ctx.io.stdout(`${created.id}\n`);
    const batch = await waitWithProgress(ctx, created.id);
    if (!batch) {
      ctx.io.stderr(`inferq: stopped waiting; batch ${created.id} goes on (inferq batch get ${created.id}; inferq batch cancel ${created.id} stops it)\n`);
      return 130;
    }
    const written = await downloadFiles(ctx, batch);
    emit(ctx, batch, () => [...formatBulkBatch(batch), ...written]);
    return batch.status === 'completed' ? 0 : 1;
  },
};

export const batchGet: Command = {
  usage: `batch get <id> ${FILE_USAGE}   (with --output or --errors: writes the ended batch's output or error file there)`,
  options: FILE_OPTIONS,
  async run(ctx) {
    const batch = await ctx.client.batches.get(onePositional(ctx.args, 'batch id'));
    if (hasFileOptions(ctx.values) && !isBatchEnded(batch.status)) throw new Error(`batch ${batch.id} is ${batch.status}: its files are written when it ends`);
    const written = hasFileOptions(ctx.values) ? await downloadFiles(ctx, batch) : [];
    emit(ctx, batch, () => [...formatBulkBatch(batch), ...written]);
    return 0;
  },
};

export const batchList: Command = {
  usage: `batch list [--limit N]   (newest first; default ${DEFAULT_LIST_LIMIT})`,
  options: { limit: { type: 'string' } },
  async run(ctx) {
    const limit = integerOption(ctx.values, 'limit', { min: 1, max: 100_000 }) ?? DEFAULT_LIST_LIMIT;
    const batches: BulkBatch[] = [];
    let after: string | undefined;
    let more = false;
    do {
      const page = await ctx.client.batches.page({ limit: Math.min(PAGE_MAX, limit - batches.length), after });
      batches.push(...page.data);
      more = page.has_more && page.last_id !== null;
      after = page.last_id ?? undefined;
    } while (more && batches.length < limit);
    emit(ctx, batches, () => (batches.length ? batches.map(formatBulkBatchSummary) : ['no batches']));
    if (more) ctx.io.stderr(`inferq: more batches; --limit ${limit} shown\n`);
    return 0;
  },
};

export const batchCancel: Command = {
  usage: 'batch cancel <id>   (its queued jobs are canceled, running ones finish; it ends cancelled with the files of what was done)',
  options: {},
  async run(ctx) {
    const batch = await ctx.client.batches.cancel(onePositional(ctx.args, 'batch id'));
    emit(ctx, batch, () => formatBulkBatch(batch));
    return 0;
  },
};
