import { ServiceStartError } from './service-start-error.ts';

/** What the demo prints when it cannot come up: the cause and the fix, never a stack trace. */
export function describeStartFailure(err: unknown): string {
  const errors = err instanceof AggregateError ? err.errors : [err];
  return errors
    .map((e: unknown) => {
      if (e instanceof ServiceStartError) return `could not start ${e.service}: ${e.reason}\n  fix: ${e.fix}`;
      return `could not start: ${e instanceof Error ? e.message : String(e)}`;
    })
    .join('\n');
}
