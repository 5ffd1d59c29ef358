import { pino, type Logger, type LevelWithSilent } from 'pino';

export type { Logger };

/** Paths never written to logs. */
export const REDACT_PATHS = ['req.headers.authorization', 'req.headers["x-api-key"]', '*.apiKey', '*.secret', 'outputs[*].url'];

export function createLogger(options: { service: string; level: LevelWithSilent | string; pretty?: boolean }): Logger {
  const pretty = options.pretty ?? process.stdout.isTTY === true;
  return pino({
    name: options.service,
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    ...(pretty ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } } } : {}),
  });
}
