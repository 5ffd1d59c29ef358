import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

type Closer = () => Promise<unknown> | unknown;

/**
 * Registers closers run in reverse order on SIGINT/SIGTERM or an uncaught
 * error; the process exits once they finish or after delayMs.
 */
export function onShutdown(logger: Logger, closers: Closer[], delayMs = 30_000): void {
  closeWithGrace({ delay: delayMs }, async ({ signal, err }) => {
    if (err) logger.error({ err }, 'shutting down after an uncaught error');
    else logger.info({ signal }, 'shutting down');
    for (const close of [...closers].reverse()) {
      try {
        await close();
      } catch (e) {
        logger.error({ err: e }, 'error while closing');
      }
    }
  });
}
