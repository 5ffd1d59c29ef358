import type { JobSummary } from '../jobs.ts';
import { emit, integerOption, type Command } from './command.ts';
import { formatJobSummary } from './format.ts';
import { JOB_FILTER_OPTIONS, JOB_FILTER_USAGE, jobFilterFromOptions } from './job-filter-options.ts';

const DEFAULT_LIMIT = 50;
/** The API's largest page. */
const PAGE_MAX = 500;

export const jobsList: Command = {
  usage: `jobs list ${JOB_FILTER_USAGE} [--limit N]   (newest first; default ${DEFAULT_LIMIT})`,
  options: { ...JOB_FILTER_OPTIONS, limit: { type: 'string' } },
  async run(ctx) {
    const filter = jobFilterFromOptions(ctx.values);
    const limit = integerOption(ctx.values, 'limit', { min: 1, max: 100_000 }) ?? DEFAULT_LIMIT;
    const jobs: JobSummary[] = [];
    let cursor: string | undefined;
    let more = false;
    do {
      const page = await ctx.client.jobs.page({ ...filter, limit: Math.min(PAGE_MAX, limit - jobs.length), cursor });
      jobs.push(...page.items);
      cursor = page.nextCursor ?? undefined;
      more = cursor !== undefined;
    } while (more && jobs.length < limit);
    emit(ctx, jobs, () => (jobs.length ? jobs.map(formatJobSummary) : ['no jobs match']));
    if (more) ctx.io.stderr(`inferq: more jobs match; --limit ${limit} shown\n`);
    return 0;
  },
};
