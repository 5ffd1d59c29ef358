import { QueueEvents } from 'bullmq';
import { BULLMQ_OPTIONS } from '../connection/bullmq-options.ts';
import { duplicateForBlocking, type RedisClient } from '../connection/connection.ts';
import { queueNameFor } from '../names.ts';

/**
 * BullMQ queue events a watch can be woken by. `completed` and `failed` end an
 * attempt; `active` is a fetch (the row turns `running` a little later, when the
 * batch is claimed); `waiting` and `delayed` follow a retry that requeued the
 * job; `removed` follows a cancel or an expiry; `stalled` a lost worker.
 */
export const QUEUE_JOB_EVENTS = ['active', 'completed', 'failed', 'waiting', 'delayed', 'removed', 'stalled'] as const;
export type QueueJobEvent = (typeof QUEUE_JOB_EVENTS)[number];

/** What `Prefer: wait` needs: the ends of an attempt. */
const END_EVENTS: readonly QueueJobEvent[] = ['completed', 'failed'];

export interface JobEvents {
  /** Subscribes to a model queue's events (once); resolve before submitting a job whose end you will wait for. */
  listen(model: string): Promise<void>;
  /**
   * Watches a job of a model already listened to. Start watching before
   * reading the job's row, so an end between the read and the wait is not missed.
   * `events`: what wakes the watch, the ends of an attempt unless told.
   */
  watch(jobId: string, options?: { events?: readonly QueueJobEvent[] }): JobWatch;
  /** Watches open now (a stream that ends must leave none behind). */
  watchCount(): number;
  close(): Promise<void>;
}

export interface JobWatch {
  /**
   * Resolves when the queue has reported one of the watched events for the
   * job since the last wait (with the latest such event), or with undefined
   * after `timeoutMs` or once `signal` aborts. An attempt that failed may be
   * retried: read the job's row.
   */
  wait(timeoutMs: number, signal?: AbortSignal): Promise<QueueJobEvent | undefined>;
  /** The latest event reported since the last wait or take, taken at once (undefined: none). */
  take(): QueueJobEvent | undefined;
  stop(): void;
}

type Notify = (event: QueueJobEvent) => void;

/**
 * Job events as BullMQ reports them on its event stream, for callers that
 * wait for a job (`Prefer: wait`) or follow it (the job's SSE stream). One
 * blocking connection per model queue, made only when somebody watches that
 * model.
 */
export function createJobEvents(options: { connection: RedisClient; prefix: string }): JobEvents {
  const listeners = new Map<string, { events: QueueEvents; connection: RedisClient; ready: Promise<unknown> }>();
  const watches = new Map<string, Set<{ events: readonly QueueJobEvent[]; notify: Notify }>>();
  const wake = (jobId: string, event: QueueJobEvent): void => {
    for (const w of watches.get(jobId) ?? []) if (w.events.includes(event)) w.notify(event);
  };
  // A group entry (queue-groups.ts) completes with its members' ids: each member's watch wakes with it. Its other
  // events name the entry alone; a member's own later ones (queued again alone) name the member.
  const wakerFor =
    (event: QueueJobEvent) =>
    ({ jobId, returnvalue }: { jobId: string; returnvalue?: unknown }) => {
      wake(jobId, event);
      if (event === 'completed' && Array.isArray(returnvalue)) for (const id of returnvalue) if (typeof id === 'string') wake(id, event);
    };

  async function listen(model: string): Promise<void> {
    let listener = listeners.get(model);
    if (!listener) {
      // QueueEvents blocks on its connection: it needs one of its own that waits for Redis.
      const connection = duplicateForBlocking(options.connection);
      const events = new QueueEvents(queueNameFor(model), { connection, prefix: options.prefix, ...BULLMQ_OPTIONS });
      for (const event of QUEUE_JOB_EVENTS) events.on(event, wakerFor(event) as never);
      events.on('error', () => {}); // reconnects by itself; waiters fall back to their timeout
      listener = { events, connection, ready: events.waitUntilReady() };
      listeners.set(model, listener);
    }
    await listener.ready;
  }

  return {
    listen,
    watch(jobId, { events = END_EVENTS } = {}) {
      let woken: QueueJobEvent | undefined;
      let resolveWait: (() => void) | undefined;
      const entry = {
        events,
        notify: (event: QueueJobEvent) => {
          woken = event;
          resolveWait?.();
        },
      };
      const set = watches.get(jobId) ?? new Set();
      set.add(entry);
      watches.set(jobId, set);
      return {
        async wait(timeoutMs, signal) {
          if (woken === undefined && !signal?.aborted) {
            await new Promise<void>((resolve) => {
              const done = () => {
                clearTimeout(timer);
                signal?.removeEventListener('abort', done);
                resolve();
              };
              const timer = setTimeout(done, timeoutMs);
              signal?.addEventListener('abort', done, { once: true });
              resolveWait = done;
            });
            resolveWait = undefined;
          }
          const event = woken;
          woken = undefined;
          return event;
        },
        take() {
          const event = woken;
          woken = undefined;
          return event;
        },
        stop() {
          set.delete(entry);
          if (set.size === 0 && watches.get(jobId) === set) watches.delete(jobId);
          resolveWait?.();
        },
      };
    },
    watchCount: () => [...watches.values()].reduce((n, s) => n + s.size, 0),
    async close() {
      const all = [...listeners.values()];
      listeners.clear();
      await Promise.allSettled(
        all.map(async (l) => {
          await l.events.close();
          l.connection.disconnect();
        }),
      );
    },
  };
}
