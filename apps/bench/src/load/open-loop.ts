import { Pool as HttpPool } from 'undici';
import { percentile } from '../stats.ts';

/** One request of an open-loop run: when it was sent (ms since the run started), how long it took, what it answered. */
export interface TimedReply {
  sentMs: number;
  ms: number;
  /** HTTP status; 0: no answer (a socket error or timeout). */
  status: number;
}

export interface OpenLoop {
  /** The replies so far, in completion order. */
  readonly replies: readonly TimedReply[];
  /** Milliseconds since the run started (the clock `sentMs` is on). */
  now(): number;
  /** Stops sending and waits for the requests in flight. */
  stop(): Promise<TimedReply[]>;
}

export interface OpenLoopRequest {
  method: 'GET' | 'POST';
  path: string;
  /** Already serialised (scenarios send a few bodies over and over). */
  body?: string;
}

/**
 * Sends `request(i)` every `1000 / ratePerS` ms over one keep-alive pool, without
 * waiting for earlier replies, and times each one with its send time, so
 * latencies can be cut into windows (what happened around an event). A
 * `request` that returns undefined skips that tick.
 */
export function startOpenLoop(o: {
  baseUrl: string;
  ratePerS: number;
  headers: Record<string, string>;
  request: (i: number) => OpenLoopRequest | undefined;
  connections?: number;
  /** Each answer's status and body text (e.g. to keep the ids of accepted jobs). */
  onReply?: (status: number, body: string) => void;
  /** The performance.now() the run's clock starts at (several loops on one clock); default: now. */
  origin?: number;
}): OpenLoop {
  const http = new HttpPool(o.baseUrl, { connections: o.connections ?? 64, pipelining: 1 });
  const started = o.origin ?? performance.now();
  const now = () => performance.now() - started;
  const replies: TimedReply[] = [];
  const inFlight = new Set<Promise<void>>();
  async function send(r: OpenLoopRequest): Promise<void> {
    const sentMs = now();
    let status = 0;
    try {
      const res = await http.request({ path: r.path, method: r.method, headers: o.headers, body: r.body, headersTimeout: 30_000 });
      const text = await res.body.text();
      status = res.statusCode;
      o.onReply?.(status, text);
    } catch {
      // status 0: counted as an error by the caller
    }
    replies.push({ sentMs, ms: now() - sentMs, status });
  }
  let i = 0;
  // Each tick sends every request due by now: timers slip on a busy box, the rate must not.
  const timer = setInterval(() => {
    for (const due = Math.floor((now() * o.ratePerS) / 1000); i < due; i++) {
      const r = o.request(i);
      if (!r) continue;
      const p = send(r).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }, 1000 / o.ratePerS);
  return {
    replies,
    now,
    async stop() {
      clearInterval(timer);
      await Promise.all(inFlight);
      await http.close();
      return replies;
    },
  };
}

/** Replies cut into windows of `windowS` by send time: each window's start (s), count and p99 (ms). */
export function p99ByWindow(replies: readonly TimedReply[], windowS: number): Array<{ startS: number; count: number; p99Ms: number | null }> {
  const windows = new Map<number, number[]>();
  for (const r of replies) {
    const w = Math.floor(r.sentMs / 1000 / windowS);
    const ms = windows.get(w) ?? [];
    ms.push(r.ms);
    windows.set(w, ms);
  }
  return [...windows].sort(([a], [b]) => a - b).map(([w, ms]) => ({ startS: w * windowS, count: ms.length, p99Ms: percentile(ms, 99) }));
}
