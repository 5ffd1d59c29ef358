import type { ParseArgsConfig } from 'node:util';
import { JOB_STATUSES, JobFilterSchema, PRIORITIES, type JobFilterQuery } from '@inferq/contracts';
import { stringOption, type OptionValues } from './command.ts';
import { UsageError } from './config.ts';

// The options that pick jobs, shared by every command that lists or acts on a set of them.

/** The flags as parseArgs takes them; spread into a command's `options`. */
export const JOB_FILTER_OPTIONS = {
  status: { type: 'string' },
  model: { type: 'string' },
  priority: { type: 'string' },
  id: { type: 'string' },
  'key-id': { type: 'string' },
  'error-code': { type: 'string' },
  'error-text': { type: 'string' },
  since: { type: 'string' },
  until: { type: 'string' },
} as const satisfies ParseArgsConfig['options'];

/** The flags as a usage line shows them. */
export const JOB_FILTER_USAGE =
  '[--status S] [--model NAME] [--priority high|normal|low] [--id ID-OR-PREFIX] [--key-id UUID] [--error-code CODE] [--error-text TEXT] ' +
  '[--since ISO|15m|2h|7d] [--until ISO|DURATION]';

const DURATION_UNIT_MS = { s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const DURATION = /^(\d{1,9})([smhd])$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const { id: ID, errorCode: ERROR_CODE } = JobFilterSchema.properties;

/** `--since`/`--until`: an ISO time, or a duration (`15m`, `2h`, `7d`) meaning that long before `nowMs`. */
export function parseTimeOption(name: string, text: string, nowMs: number): string {
  const duration = DURATION.exec(text);
  if (duration) return new Date(nowMs - Number(duration[1]) * DURATION_UNIT_MS[duration[2] as keyof typeof DURATION_UNIT_MS]).toISOString();
  // A date alone ("2025-06-01") or a time without an offset is read as JavaScript reads it and sent as UTC.
  const at = new Date(text);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--${name} must be an ISO time or a duration such as 15m, 2h or 7d, not ${JSON.stringify(text)}`);
  return at.toISOString();
}

function oneOf<T extends string>(values: OptionValues, name: string, allowed: readonly T[]): T | undefined {
  const v = stringOption(values, name);
  if (v !== undefined && !allowed.includes(v as T)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}, not ${JSON.stringify(v)}`);
  return v as T | undefined;
}

function matching(values: OptionValues, name: string, pattern: RegExp, what: string): string | undefined {
  const v = stringOption(values, name);
  if (v !== undefined && !pattern.test(v)) throw new UsageError(`--${name} must be ${what}, not ${JSON.stringify(v)}`);
  return v;
}

/** The filter the flags describe; a malformed flag is a UsageError (exit status 2) before any request. */
export function jobFilterFromOptions(values: OptionValues, nowMs: number = Date.now()): JobFilterQuery {
  const since = stringOption(values, 'since');
  const until = stringOption(values, 'until');
  const errorCode = stringOption(values, 'error-code')?.toUpperCase();
  const filter: JobFilterQuery = {
    status: oneOf(values, 'status', JOB_STATUSES),
    model: stringOption(values, 'model'),
    priority: oneOf(values, 'priority', PRIORITIES),
    id: matching(values, 'id', new RegExp(ID.pattern ?? ''), 'a job id or its first hex digits'),
    keyId: matching(values, 'key-id', UUID, 'an API key id (a uuid)'),
    errorCode: matching({ 'error-code': errorCode }, 'error-code', new RegExp(ERROR_CODE.pattern ?? ''), 'an error code such as MODEL_LOAD_FAILED'),
    errorText: stringOption(values, 'error-text'),
    createdAfter: since === undefined ? undefined : parseTimeOption('since', since, nowMs),
    createdBefore: until === undefined ? undefined : parseTimeOption('until', until, nowMs),
  };
  if (filter.errorText === '') throw new UsageError('--error-text must not be empty');
  if (filter.createdAfter && filter.createdBefore && filter.createdAfter >= filter.createdBefore) throw new UsageError('--since must be before --until');
  return Object.fromEntries(Object.entries(filter).filter(([, v]) => v !== undefined)) as JobFilterQuery;
}
