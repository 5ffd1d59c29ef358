import { pino, type Logger, type LevelWithSilent } from 'pino';
import { activeTraceIds } from './tracing.ts';

export type { Logger };

/** Paths never written to logs. */
export const REDACT_PATHS = ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.secret', 'outputs[*].url'];

export function createLogger(options: { service: string; level: LevelWithSilent | string; pretty?: boolean }): Logger {
  const pretty = options.pretty ?? (process.stdout.isTTY === true);
  return pino({
    name: options.service,
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Lines written inside a traced request or batch carry its trace, so logs and traces join.
    mixin: activeTraceIds,
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}
