import { isTerminalStatus, type JobStatusEvent } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import { QUEUE_JOB_EVENTS, type JobEvents } from '@inferq/queue';

// A job's status changes as a stream (GET /v1/jobs/:id/events).
//
// Postgres is the source of truth: the queue's events for the job only wake
// the stream, which then re-reads the row and sends an event when its status
// (or attempt) moved on. The queue's events run ahead of the row — `active`
// comes when a worker fetches the job, the row turns `running` when the
// batch is claimed, after the batch delay — so after a wake-up that changed
// nothing the row is read again every `settlePollMs` for a while. A slow
// poll catches what the queue does not report (a lost pub/sub message while
// Redis reconnects, a change made by another API replica).
//
// Event ids come from the row, not from the connection, so they mean the same
// thing on every replica and after a reconnect: 3 × attempts + a rank
// (running 0, queued 1, terminal 2). Statuses follow queued(0) → running(1) →
// [queued(1) → running(2) → …] → a terminal status, and `attempts` only grows,
// when a claim starts an attempt, so the id strictly increases along a job's
// life; `Last-Event-ID` is where the client was. A reconnect gets the current
// status only if it is past that, so it never repeats an event and always
// gets the terminal one; states it missed while away are not replayed (the
// row keeps no history), which the id's gap shows.

const RANK: Record<string, number> = { running: 0, queued: 1 };
const TERMINAL_RANK = 2;

/** The event id of a job as its row is now. */
export const jobEventId = (job: Pick<JobRecord, 'status' | 'attempts'>): number =>
  3 * job.attempts + (isTerminalStatus(job.status) ? TERMINAL_RANK : RANK[job.status]!);

const toJobStatusEvent = (job: JobRecord): JobStatusEvent => ({
  id: job.id,
  status: job.status,
  attempts: job.attempts,
  ...(job.errorCode !== null && { error: { code: job.errorCode, message: job.errorMessage ?? '' } }),
});

export interface JobEventStreamDeps {
  events: JobEvents;
  getJob(id: string, ownerKeyId: string | null): Promise<JobRecord>;
  /** Row reads while nothing wakes the stream. @default 5000 */
  pollIntervalMs?: number;
  /** Row reads right after a wake-up that changed nothing. @default 50 */
  settlePollMs?: number;
  /** How long reads stay that quick after such a wake-up. @default 2000 */
  settleWindowMs?: number;
  /** The longest wait for the model's event subscription before reading anyway (the slow poll covers the gap). @default 2000 */
  listenTimeoutMs?: number;
}

export interface JobEventStreamRequest {
  /** The job as read when the request was authorised (the stream starts from its model and owner). */
  job: JobRecord;
  ownerKeyId: string | null;
  /** The client's `Last-Event-ID`: events up to it are not sent again. */
  lastEventId?: number;
  /** Aborted when the client goes away or the server closes. */
  signal: AbortSignal;
}

/** The job's status events from `lastEventId` on, ending after a terminal one (or when `signal` aborts). */
export function createJobEventStream(deps: JobEventStreamDeps) {
  const pollIntervalMs = deps.pollIntervalMs ?? 5_000;
  const settlePollMs = deps.settlePollMs ?? 50;
  const settleWindowMs = deps.settleWindowMs ?? 2_000;
  const listenTimeoutMs = deps.listenTimeoutMs ?? 2_000;

  async function listenBriefly(model: string, signal: AbortSignal): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      deps.events.listen(model).catch(() => {}),
      new Promise<void>((resolve) => {
        timer = setTimeout(resolve, listenTimeoutMs);
        signal.addEventListener('abort', () => resolve(), { once: true });
      }),
    ]);
    clearTimeout(timer);
  }

  return async function* streamJobEvents(r: JobEventStreamRequest): AsyncGenerator<{ eventId: number; data: JobStatusEvent }> {
    let sent = r.lastEventId ?? -1;
    let job = r.job;
    if (!isTerminalStatus(job.status)) await listenBriefly(job.modelName, r.signal);
    // Watch first, then read: a change between the read and the wait still wakes it.
    const watch = deps.events.watch(job.id, { events: QUEUE_JOB_EVENTS });
    try {
      if (!isTerminalStatus(job.status)) job = await deps.getJob(job.id, r.ownerKeyId);
      let quickUntil = 0;
      for (;;) {
        if (r.signal.aborted) return;
        const eventId = jobEventId(job);
        if (eventId > sent) {
          sent = eventId;
          yield { eventId, data: toJobStatusEvent(job) };
        }
        if (isTerminalStatus(job.status)) return;
        const woke = await watch.wait(Date.now() < quickUntil ? settlePollMs : pollIntervalMs, r.signal);
        if (r.signal.aborted) return;
        if (woke !== undefined) quickUntil = Date.now() + settleWindowMs;
        const before = jobEventId(job);
        job = await deps.getJob(job.id, r.ownerKeyId);
        if (jobEventId(job) !== before) quickUntil = 0;
      }
    } finally {
      watch.stop();
    }
  };
}
export type JobEventStream = ReturnType<typeof createJobEventStream>;
