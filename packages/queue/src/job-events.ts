import { QueueEvents } from 'bullmq';
import type { Redis } from './connection.ts';
import { queueNameFor } from './names.ts';

export interface JobEvents {
  /** Subscribes to a model queue's events (once); resolve before submitting a job whose end you will wait for. */
  listen(model: string): Promise<void>;
  /**
   * Watches a job of a model already listened to. Start watching before
   * reading the job's row, so an end between the read and the wait is not missed.
   */
  watch(jobId: string): JobWatch;
  close(): Promise<void>;
}

export interface JobWatch {
  /**
   * Resolves when the queue has reported the job completed, or an attempt of
   * it failed (it may be retried: read its row), since the last wait; or
   * after `timeoutMs`.
   */
  wait(timeoutMs: number): Promise<void>;
  stop(): void;
}

/**
 * Job ends as BullMQ reports them on its event stream, for callers that wait
 * for a job (`Prefer: wait`). One blocking connection per model queue, made
 * only when somebody waits on that model.
 */
export function createJobEvents(options: { connection: Redis; prefix: string }): JobEvents {
  const listeners = new Map<string, { events: QueueEvents; connection: Redis; ready: Promise<unknown> }>();
  const watches = new Map<string, Set<() => void>>();
  const wake = ({ jobId }: { jobId: string }) => {
    for (const notify of watches.get(jobId) ?? []) notify();
  };

  async function listen(model: string): Promise<void> {
    let listener = listeners.get(model);
    if (!listener) {
      // QueueEvents blocks on its connection: it needs one of its own that waits for Redis.
      const connection = options.connection.duplicate({ maxRetriesPerRequest: null, enableOfflineQueue: true });
      const events = new QueueEvents(queueNameFor(model), { connection, prefix: options.prefix, skipVersionCheck: true });
      events.on('completed', wake);
      events.on('failed', wake);
      events.on('error', () => {}); // reconnects by itself; waiters fall back to their timeout
      listener = { events, connection, ready: events.waitUntilReady() };
      listeners.set(model, listener);
    }
    await listener.ready;
  }

  return {
    listen,
    watch(jobId) {
      let woken = false;
      let resolveWait: (() => void) | undefined;
      const notify = () => {
        woken = true;
        resolveWait?.();
      };
      const set = watches.get(jobId) ?? new Set();
      set.add(notify);
      watches.set(jobId, set);
      return {
        async wait(timeoutMs) {
          if (!woken) {
            await new Promise<void>((resolve) => {
              const timer = setTimeout(resolve, timeoutMs);
              resolveWait = () => {
                clearTimeout(timer);
                resolve();
              };
            });
            resolveWait = undefined;
          }
          woken = false;
        },
        stop() {
          set.delete(notify);
          if (set.size === 0) watches.delete(jobId);
        },
      };
    },
    async close() {
      const all = [...listeners.values()];
      listeners.clear();
      await Promise.allSettled(all.map(async (l) => {
        await l.events.close();
        l.connection.disconnect();
      }));
    },
  };
}
