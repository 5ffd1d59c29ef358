import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';

type Closer = () => Promise<unknown> | unknown;

/**
 * Registers closers run in reverse order on SIGINT/SIGTERM or an uncaught
 * error; the process exits once they finish or after delayMs. Whatever ends it
 * with status 1 is logged through the service's logger: the first error, a
 * second one while closing, or the closer still running when delayMs ran out.
 */
export function onShutdown(logger: Logger, closers: Closer[], delayMs = 30_000): void {
  let closing: Closer | undefined;
  closeWithGrace(
    {
      delay: delayMs,
      logger: false,
      onSecondError: (err) => logger.error({ err }, 'a second error while shutting down; exiting'),
      onSecondSignal: (signal) => logger.error({ signal }, 'a second signal while shutting down; exiting'),
      onTimeout: (ms) => logger.error({ delayMs: ms, closer: closing && String(closing) }, 'shutdown timed out; exiting'),
    },
    async ({ signal, err }) => {
      if (err) logger.error({ err }, 'shutting down after an uncaught error');
      else logger.info({ signal }, 'shutting down');
      for (const close of [...closers].reverse()) {
        closing = close;
        try {
          await close();
        } catch (e) {
          logger.error({ err: e }, 'error while closing');
        }
      }
    },
  );
}
