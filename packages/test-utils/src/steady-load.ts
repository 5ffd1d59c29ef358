import { randomUUID } from 'node:crypto';
import type { Stack } from './stack.ts';

export interface SteadyLoadResult {
  /** Every submission of this load carries it in its metadata (LOAD_ID_KEY). */
  loadId: string;
  submitted: number;
  /** Ids of the jobs answered 202. */
  accepted: string[];
  /** 503s; each carried Retry-After. */
  refused: number;
  /** The 503s by their problem code (QUEUE_UNAVAILABLE, DATABASE_UNAVAILABLE, …). */
  refusedCodes: Record<string, number>;
  /** Replies that break the promise: any other status, a 503 without Retry-After, or no reply within the timeout. */
  violations: string[];
  /** Milliseconds per reply, in completion order. */
  latenciesMs: number[];
  /** The longest stretch of consecutive 503s, from the first one's send to the last one's reply (ms): how long clients were turned away. */
  longestRefusalMs: number;
}

/** The metadata key each submission carries its load's id under, so a refused one that was recorded anyway can be found. */
export const LOAD_ID_KEY = 'steadyLoad';

export interface SteadyLoad {
  readonly accepted: readonly string[];
  /** 503s so far. */
  readonly refused: number;
  /** Stops submitting and waits for the requests in flight. */
  stop(): Promise<SteadyLoadResult>;
}

/**
 * Submits one job every `1000 / ratePerS` ms, without waiting for the
 * previous reply (a fault must not slow the load down), until stopped.
 */
export function startSteadyLoad(
  stack: Pick<Stack, 'baseUrl'>,
  o: {
    ratePerS: number;
    body: (i: number) => unknown;
    authorization: string;
    replyTimeoutMs?: number;
    /**
     * As the SDK submits: each submission under an Idempotency-Key of its own, sent again under it after a 503 (its
     * Retry-After, at most `retryPauseMs`) or no reply, until accepted or `retryForMs` has passed. A commit whose outcome
     * the API could not know then counts once. Without it, each submission is sent once.
     */
    retry?: { retryForMs: number; retryPauseMs?: number };
  },
): SteadyLoad {
  const result: SteadyLoadResult = {
    loadId: randomUUID(),
    submitted: 0,
    accepted: [],
    refused: 0,
    refusedCodes: {},
    violations: [],
    latenciesMs: [],
    longestRefusalMs: 0,
  };
  // Per submission in send order: when it was sent, when answered, whether it was refused.
  const replies: Array<{ sentMs: number; answeredMs: number; refused: boolean }> = [];
  const inFlight = new Set<Promise<void>>();
  const timeoutMs = o.replyTimeoutMs ?? 5_000;

  async function submitOne(i: number): Promise<void> {
    result.submitted++;
    const started = performance.now();
    const reply = { sentMs: started, answeredMs: started, refused: false };
    replies[i] = reply;
    const headers: Record<string, string> = { authorization: o.authorization, 'content-type': 'application/json' };
    if (o.retry) headers['idempotency-key'] = randomUUID();
    const body = JSON.stringify({ ...(o.body(i) as object), metadata: { [LOAD_ID_KEY]: result.loadId } });
    for (;;) {
      const sentMs = performance.now();
      const outcome = await tryOnce(headers, body);
      reply.answeredMs = performance.now();
      result.latenciesMs.push(reply.answeredMs - sentMs);
      if (outcome.kind === 'refused') {
        result.refused++;
        reply.refused = true;
        result.refusedCodes[outcome.code] = (result.refusedCodes[outcome.code] ?? 0) + 1;
      }
      const retryable = outcome.kind === 'refused' || outcome.kind === 'unanswered';
      if (o.retry && retryable && reply.answeredMs - started < o.retry.retryForMs) {
        const pauseMs = Math.min(outcome.kind === 'refused' ? outcome.retryAfterS * 1000 : 0, o.retry.retryPauseMs ?? 500);
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        continue;
      }
      if (outcome.kind === 'accepted') result.accepted.push(outcome.id);
      else if (outcome.kind !== 'refused') result.violations.push(outcome.why);
      return;
    }
  }

  type Outcome = { kind: 'accepted'; id: string } | { kind: 'refused'; code: string; retryAfterS: number } | { kind: 'broken' | 'unanswered'; why: string };
  async function tryOnce(headers: Record<string, string>, body: string): Promise<Outcome> {
    try {
      const res = await fetch(`${stack.baseUrl}/v1/jobs`, { method: 'POST', headers, body, signal: AbortSignal.timeout(timeoutMs) });
      const json = (await res.json()) as { id?: string; code?: string };
      // A replay under the same key answers 200 with the job the first try created.
      if ((res.status === 202 || (o.retry && res.status === 200)) && json.id) return { kind: 'accepted', id: json.id };
      const retryAfter = res.headers.get('retry-after');
      if (res.status === 503 && retryAfter) return { kind: 'refused', code: json.code ?? 'no code', retryAfterS: Number(retryAfter) || 1 };
      return { kind: 'broken', why: `${res.status} ${json.code ?? ''}${res.status === 503 ? ' without Retry-After' : ''}` };
    } catch (err) {
      const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      return { kind: 'unanswered', why: `no reply: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}` };
    }
  }

  let i = 0;
  const timer = setInterval(() => {
    const p = submitOne(i++).finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 1000 / o.ratePerS);

  return {
    get accepted() {
      return result.accepted;
    },
    get refused() {
      return result.refused;
    },
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      result.longestRefusalMs = longestRefusal(replies);
      return result;
    },
  };
}

function longestRefusal(replies: ReadonlyArray<{ sentMs: number; answeredMs: number; refused: boolean }>): number {
  let longest = 0;
  let runStart: number | undefined;
  for (const r of replies) {
    if (!r?.refused) {
      runStart = undefined;
      continue;
    }
    runStart ??= r.sentMs;
    longest = Math.max(longest, r.answeredMs - runStart);
  }
  return Math.round(longest);
}
