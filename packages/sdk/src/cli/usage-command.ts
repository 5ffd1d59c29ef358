import { USAGE_GROUPS, type UsageQuery } from '@inferq/contracts';
import { emit, stringOption, type Command, type OptionValues } from './command.ts';
import { UsageError } from './config.ts';
import { formatUsage } from './format.ts';

/** An ISO time the API accepts: a date alone ("2025-06-01") or one without an offset is normalised to UTC here rather than refused there. */
function timeOption(values: OptionValues, name: string): string | undefined {
  const text = stringOption(values, name);
  if (text === undefined) return undefined;
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--${name} must be an ISO date or time, not ${JSON.stringify(text)}`);
  return at.toISOString();
}

function groupOption(values: OptionValues): UsageQuery['groupBy'] {
  const group = stringOption(values, 'group-by');
  if (group !== undefined && !(USAGE_GROUPS as readonly string[]).includes(group)) throw new UsageError(`--group-by must be one of ${USAGE_GROUPS.join(', ')}`);
  return group as UsageQuery['groupBy'];
}

export const usageReport: Command = {
  usage: 'usage [--from ISO] [--to ISO] [--group-by key|model]   (device time of succeeded jobs; default the last 24 hours, per key)',
  options: { from: { type: 'string' }, to: { type: 'string' }, 'group-by': { type: 'string' } },
  async run(ctx) {
    const report = await ctx.client.usage({ from: timeOption(ctx.values, 'from'), to: timeOption(ctx.values, 'to'), groupBy: groupOption(ctx.values) });
    emit(ctx, report, () => formatUsage(report));
    return 0;
  },
};
