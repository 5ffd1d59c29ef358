import { InferqError } from './errors.ts';
import { sleep } from './wait-for-job.ts';

// A call that creates jobs (a submit, a retry, a bulk retry) is sent again, under the same Idempotency-Key and with the
// same bytes, when the server refused it only for now (429, 502, 503, 504) or when no answer came (no connection, or none
// within the try's timeout): the first try may have been accepted, and the key makes the server answer a repeat with
// what that try created. Anything else is thrown at once.

/** How a submit is sent again when it is refused for now or goes unanswered (`false`: sent once, with no timeout). */
export interface SubmitRetryOptions {
  /** Tries in all, the first included; 1 sends once but still times the try out. @default 5 */
  attempts?: number;
  /** No wait starts that would end later than this after the first try; the last error is thrown instead. @default 30000 */
  maxElapsedMs?: number;
  /**
   * A try with no answer (status and headers) in this long is aborted and counts as unanswered. A submit with `wait` gets
   * the wait on top, and a body gets 1 s per MiB on top, so a slow upload is not mistaken for a hung server. @default 10000
   */
  attemptTimeoutMs?: number;
}

export const DEFAULT_SUBMIT_RETRY: Readonly<Required<SubmitRetryOptions>> = { attempts: 5, maxElapsedMs: 30_000, attemptTimeoutMs: 10_000 };

/** Pauses between tries without a Retry-After: 250 ms doubling up to 5 s, each between half and all of that (jitter). */
const BACKOFF_MIN_MS = 250;
const BACKOFF_MAX_MS = 5_000;
const MS_PER_BODY_MIB = 1_000;

/** The policy of one call: its own options over the client's over the defaults; `false` from either (the call's first) turns retries off. */
export function resolveSubmitRetry(
  client: SubmitRetryOptions | false | undefined,
  call: SubmitRetryOptions | false | undefined,
): Required<SubmitRetryOptions> | false {
  if (call === false || (call === undefined && client === false)) return false;
  const merged = { ...DEFAULT_SUBMIT_RETRY, ...definedOnly(client || {}), ...definedOnly(call ?? {}) };
  return { ...merged, attempts: Math.max(1, Math.floor(merged.attempts)) };
}

const definedOnly = (options: SubmitRetryOptions): SubmitRetryOptions =>
  Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined)) as SubmitRetryOptions;

/** Refused only for now (throttled, a gateway or the queue briefly down) or never answered: the same request may be sent again. */
export const isRetryableSubmitError = (err: unknown): err is InferqError =>
  err instanceof InferqError && (err.retryable || err.status === 502 || err.status === 504);

/** A fresh Idempotency-Key (a UUID v4). randomUUID needs a secure context in browsers; getRandomValues does not. */
export function newIdempotencyKey(): string {
  const { crypto } = globalThis;
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A body that can be sent again as the same bytes; a stream is read once, so a submit with one is never retried. */
export const isReplayableBody = (body: unknown): boolean => !(typeof ReadableStream !== 'undefined' && body instanceof ReadableStream);

export interface RetryCall {
  signal?: AbortSignal | undefined;
  /** Added to the try's timeout: the time the server is asked to take (a `Prefer: wait`, a bulk retry's jobs). */
  allowanceMs?: number;
  /** The body's size, for the timeout's allowance. */
  bodyBytes?: number;
  /** False for a one-shot body: sent once. */
  replayable: boolean;
}

/**
 * `read(await send(signal))`, with `send` tried again under `policy` (see the file comment). `read` runs once an answer
 * came and is never retried. The caller's signal aborts a try, a pause, and the read; its abort is thrown as it is.
 */
export async function sendWithRetry<T>(
  send: (signal: AbortSignal | undefined) => Promise<Response>,
  read: (response: Response) => Promise<T>,
  policy: Required<SubmitRetryOptions> | false,
  call: RetryCall,
): Promise<T> {
  if (policy === false || !call.replayable) return read(await send(call.signal));
  const timeoutMs = policy.attemptTimeoutMs + (call.allowanceMs ?? 0) + Math.ceil(((call.bodyBytes ?? 0) / 2 ** 20) * MS_PER_BODY_MIB);
  const startedAt = Date.now();
  for (let attempt = 1; ; attempt++) {
    let answered = false;
    const readAnswer = (response: Response) => {
      answered = true;
      return read(response);
    };
    try {
      return await tryOnce(send, readAnswer, timeoutMs, call.signal);
    } catch (err) {
      if (answered || call.signal?.aborted || !isRetryableSubmitError(err) || attempt >= policy.attempts) throw err;
      const pauseMs = pauseBeforeRetryMs(err, attempt);
      if (Date.now() + pauseMs - startedAt > policy.maxElapsedMs) throw err;
      await sleep(pauseMs, call.signal);
    }
  }
}

function pauseBeforeRetryMs(err: InferqError, attempt: number): number {
  if (err.retryAfter !== undefined) return err.retryAfter * 1000;
  const ceilingMs = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (attempt - 1));
  return ceilingMs / 2 + Math.random() * (ceilingMs / 2);
}

const noAnswer = (timeoutMs: number) =>
  new InferqError({ type: 'about:blank', title: 'No answer from the API', status: 0, code: 'NETWORK_ERROR', detail: `no answer within ${timeoutMs} ms` });

/** One try: aborted when no answer comes in `timeoutMs` (thrown as NETWORK_ERROR) or when the caller's signal aborts. */
async function tryOnce<T>(
  send: (signal: AbortSignal) => Promise<Response>,
  read: (response: Response) => Promise<T>,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<T> {
  if (signal?.aborted) throw signal.reason;
  const controller = new AbortController();
  const onAbort = () => controller.abort(signal?.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Settles the try even when a fetch double ignores the signal; the real fetch is aborted too.
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = noAnswer(timeoutMs);
      reject(err);
      controller.abort(err);
    }, timeoutMs);
  });
  const sending = send(controller.signal);
  // Once the timeout wins the race nobody awaits `sending`: its rejection (the abort) is expected and dropped.
  sending.catch(() => {});
  try {
    const response = await Promise.race([sending, timedOut]);
    clearTimeout(timer);
    return await read(response);
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/** Refused before anything was done: throttled (429) or unavailable (503). */
const isRefusedForNow = (err: unknown): err is InferqError => err instanceof InferqError && (err.status === 429 || err.status === 503);

/**
 * For a call the server does not deduplicate (a file upload, a batch create: no Idempotency-Key there): `send` again
 * under `policy` only when it was answered 429 or 503, refused before anything was done, after its `Retry-After`
 * (else the backoff). No answer, a 502 or a 504 is thrown, since the first try may have been done; so is a one-shot
 * body's refusal. No try is timed out: an upload takes as long as its bytes do.
 */
export async function sendWhileRefused<T>(send: () => Promise<T>, policy: Required<SubmitRetryOptions> | false, call: RetryCall): Promise<T> {
  const startedAt = Date.now();
  for (let attempt = 1; ; attempt++) {
    try {
      return await send();
    } catch (err) {
      if (policy === false || !call.replayable || call.signal?.aborted || !isRefusedForNow(err) || attempt >= policy.attempts) throw err;
      const pauseMs = pauseBeforeRetryMs(err, attempt);
      if (Date.now() + pauseMs - startedAt > policy.maxElapsedMs) throw err;
      await sleep(pauseMs, call.signal);
    }
  }
}
