/**
 * An embedded service that could not start, with what went wrong and what the
 * user can do about it: the demo prints both and exits, never a stack trace.
 */
export class ServiceStartError extends Error {
  constructor(
    /** 'Postgres', 'Redis' or 'S3'. */
    readonly service: string,
    /** What went wrong, in a sentence or the service's own output. */
    readonly reason: string,
    /** What to do about it. */
    readonly fix: string,
    options?: { cause?: unknown },
  ) {
    super(`could not start ${service}: ${reason}\n  fix: ${fix}`, options);
    this.name = 'ServiceStartError';
  }
}

/** As ServiceStartError when it is one; anything else becomes one with a generic fix. */
export function asServiceStartError(service: string, err: unknown, fix: string): ServiceStartError {
  if (err instanceof ServiceStartError) return err;
  const reason = err instanceof Error ? err.message : String(err);
  return new ServiceStartError(service, reason, fix, { cause: err });
}
