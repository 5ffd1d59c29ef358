import type { BulkJobActionResult, JobFilterQuery } from '@inferq/contracts';
import type { BulkActionOptions } from '../jobs.ts';
import { emit, integerOption, stringOption, type Command, type CommandContext } from './command.ts';
import { UsageError } from './config.ts';
import { JOB_FILTER_OPTIONS, JOB_FILTER_USAGE, jobFilterFromOptions } from './job-filter-options.ts';

const BULK_OPTIONS = { ...JOB_FILTER_OPTIONS, limit: { type: 'string' }, 'dry-run': { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } } as const;

interface BulkVerb {
  /** `cancel` or `retry`: the API route and the SDK call. */
  action: 'cancel' | 'retry';
  /** What the jobs it applies to are, for the messages: "queued", "failed, canceled or expired". */
  applies: string;
  /** Past tense for the result line. */
  done: string;
}

function resultLines(verb: BulkVerb, r: BulkJobActionResult, limit: number): string[] {
  const lines = r.dryRun
    ? [`${r.matched} ${verb.applies} job${r.matched === 1 ? '' : 's'} match; at most ${limit} would be ${verb.done}`]
    : [`${verb.done} ${r.touched} of ${r.matched} matching ${verb.applies} jobs${r.skipped ? ` (${r.skipped} skipped)` : ''}`];
  if (r.truncated) lines.push(`more match than --limit ${limit}: run it again for the rest`);
  return lines;
}

/** Anything but y or yes is no, and so is a CLI with no way to ask. */
const confirmed = (ctx: CommandContext, question: string): Promise<boolean> => ctx.io.confirm?.(`${question} [y/N] `) ?? Promise.resolve(false);

// A retry creates jobs: sent under a key (a fresh one unless given), each job is retried once however often it is sent.
const RETRY_KEY_USAGE = ' [--idempotency-key KEY]';

const bulkCommand = (verb: BulkVerb): Command => ({
  usage:
    `jobs ${verb.action}-all ${JOB_FILTER_USAGE} [--limit N] [--dry-run] [--yes]${verb.action === 'retry' ? RETRY_KEY_USAGE : ''}   ` +
    `(${verb.action}s the ${verb.applies} jobs matching the filter; asks first, showing the count, unless --yes)`,
  options: verb.action === 'retry' ? { ...BULK_OPTIONS, 'idempotency-key': { type: 'string' } } : BULK_OPTIONS,
  async run(ctx) {
    const filter: JobFilterQuery = jobFilterFromOptions(ctx.values);
    if (Object.keys(filter).length === 0) throw new UsageError(`name at least one filter option; ${verb.action}-all never acts on every job`);
    const limit = integerOption(ctx.values, 'limit', { min: 1, max: 10_000 }) ?? 1000;
    const idempotencyKey = stringOption(ctx.values, 'idempotency-key');
    const call = (options: BulkActionOptions) =>
      verb.action === 'cancel' ? ctx.client.jobs.bulkCancel(filter, options) : ctx.client.jobs.bulkRetry(filter, { ...options, idempotencyKey });
    if (ctx.values['dry-run'] === true || ctx.values.yes !== true) {
      const preview = await call({ limit, dryRun: true });
      if (ctx.values['dry-run'] === true || preview.matched === 0) {
        emit(ctx, preview, () => resultLines(verb, preview, limit));
        return 0;
      }
      const n = Math.min(preview.matched, limit);
      for (const line of resultLines(verb, preview, limit)) ctx.io.stderr(`${line}\n`);
      if (!(await confirmed(ctx, `${verb.action} ${n} job${n === 1 ? '' : 's'}?`))) {
        ctx.io.stderr(`nothing ${verb.done} (answer y to go ahead, or pass --yes to skip the question)\n`);
        return 1;
      }
    }
    const result = await call({ limit });
    emit(ctx, result, () => resultLines(verb, result, limit));
    return 0;
  },
});

export const jobsCancelAll = bulkCommand({ action: 'cancel', applies: 'queued', done: 'canceled' });
export const jobsRetryAll = bulkCommand({ action: 'retry', applies: 'failed, canceled or expired', done: 'retried' });
