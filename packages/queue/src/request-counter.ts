import type { RedisClient } from './connection/connection.ts';
import { luaScript } from './lua-script.ts';

/** A key's requests in its current window, this one included, and the milliseconds until the window ends. */
export interface WindowCount {
  current: number;
  ttl: number;
}

export interface RequestCounter {
  /**
   * Counts one request of `key` in its fixed window of `windowMs`. Below
   * `max` the count is this process's view: the shared count as of its last
   * sync plus its own requests since. From `max` on it is read fresh from
   * Redis, so a request is refused only on the shared count.
   */
  hit(key: string, windowMs: number, max: number): Promise<WindowCount>;
  /** The count `hit` would start from, without counting. */
  peek(key: string): WindowCount;
  /** Adds every process-local count to the shared ones now. */
  flush(): Promise<void>;
  /** Flushes and stops the timer. */
  close(): Promise<void>;
}

/** How often a process adds its requests to the shared counts: the most another process's view of them lags. */
export const REQUEST_COUNT_SYNC_MS = 100;

/** Adds requests to a key's window, starting the window when the key is new; returns the count and the window's milliseconds left (src/lua). */
const addRequests = luaScript('inferqAddRequests', 'request-counter-add-1.lua');

interface Tally {
  /** Where the window ends as far as this process knows: Redis's when it has synced, else a full window from its first request. */
  endsAtMs: number;
  /** The shared count as Redis last answered it (this process's synced requests included). */
  known: number;
  /** This process's requests not yet added to Redis. */
  pending: number;
  windowMs: number;
}

/**
 * Per-key request counts over fixed windows, shared by every API process
 * through Redis at one script call per key per sync instead of one per
 * request. Far from a key's limit a request is counted in the process and
 * added to Redis within REQUEST_COUNT_SYNC_MS (one call for all of them);
 * from the limit on, each request is added at once and decided on the count
 * Redis returns; once that count is past the limit the window's remaining
 * requests are refused without asking (a window's count only grows). With
 * one process the limit is exact; with several, a key can pass it by what
 * the others admit while this one's view lags: at most two sync intervals
 * (theirs not yet added, this one's not yet read back). A window
 * starts with its key's first request and its key expires with it; one key
 * per call, so it works on every topology, Cluster included.
 */
export function createRequestCounter(connection: RedisClient, options: { prefix: string; syncMs?: number }): RequestCounter {
  const tallies = new Map<string, Tally>();

  const tallyOf = (key: string, windowMs: number, now: number): Tally => {
    let tally = tallies.get(key);
    if (!tally || tally.endsAtMs <= now) {
      tally = { endsAtMs: now + windowMs, known: 0, pending: 0, windowMs };
      tallies.set(key, tally);
    }
    return tally;
  };

  /** Adds `n` requests to the window's shared count; returns the count after them. */
  async function add(key: string, tally: Tally, n: number): Promise<number> {
    const [count, ttl] = (await addRequests(connection, [options.prefix + key], [n, tally.windowMs])) as [number, number];
    tally.known = count;
    tally.endsAtMs = Date.now() + ttl;
    return count;
  }

  async function flush(): Promise<void> {
    const now = Date.now();
    await Promise.all(
      [...tallies].map(async ([key, tally]) => {
        if (tally.pending === 0) {
          if (tally.endsAtMs <= now) tallies.delete(key);
          return;
        }
        const n = tally.pending;
        tally.pending = 0;
        // Requests not added before their window ended no longer decide anything: they go with the window.
        await add(key, tally, n).catch(() => {
          if (tally.endsAtMs > Date.now()) tally.pending += n;
        });
      }),
    );
  }

  const timer = setInterval(() => void flush(), options.syncMs ?? REQUEST_COUNT_SYNC_MS);
  timer.unref();

  return {
    async hit(key, windowMs, max) {
      const now = Date.now();
      const tally = tallyOf(key, windowMs, now);
      const seen = tally.known + tally.pending + 1;
      if (seen < max || tally.known > max) {
        tally.pending++;
        return { current: seen, ttl: tally.endsAtMs - now };
      }
      const n = tally.pending + 1;
      tally.pending = 0;
      try {
        const current = await add(key, tally, n);
        return { current, ttl: tally.endsAtMs - Date.now() };
      } catch (err) {
        tally.pending += n;
        throw err;
      }
    },
    peek(key) {
      const now = Date.now();
      const tally = tallies.get(key);
      return tally && tally.endsAtMs > now ? { current: tally.known + tally.pending, ttl: tally.endsAtMs - now } : { current: 0, ttl: 0 };
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush();
    },
  };
}
