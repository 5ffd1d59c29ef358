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
  o: { ratePerS: number; body: (i: number) => unknown; authorization: string; replyTimeoutMs?: number },
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
    try {
      const res = await fetch(`${stack.baseUrl}/v1/jobs`, {
        method: 'POST',
        headers: { authorization: o.authorization, 'content-type': 'application/json' },
        body: JSON.stringify({ ...(o.body(i) as object), metadata: { [LOAD_ID_KEY]: result.loadId } }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const json = (await res.json()) as { id?: string; code?: string };
      reply.answeredMs = performance.now();
      result.latenciesMs.push(reply.answeredMs - started);
      if (res.status === 202 && json.id) result.accepted.push(json.id);
      else if (res.status === 503 && res.headers.get('retry-after')) {
        result.refused++;
        reply.refused = true;
        const code = json.code ?? 'no code';
        result.refusedCodes[code] = (result.refusedCodes[code] ?? 0) + 1;
      } else result.violations.push(`${res.status} ${json.code ?? ''}${res.status === 503 ? ' without Retry-After' : ''}`);
    } catch (err) {
      const cause = (err as Error & { cause?: { code?: string; message?: string } }).cause;
      result.violations.push(`no reply: ${(err as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ''}`);
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
