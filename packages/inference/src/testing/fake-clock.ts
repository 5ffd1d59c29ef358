import type { Clock } from '../clock.ts';

export interface FakeClock extends Clock {
  /** Moves time forward, firing every timer that falls due, in due order. */
  advance(ms: number): void;
  /** Timers scheduled and not yet fired or cleared. */
  readonly pendingTimers: number;
}

/** A clock that only moves when told to, for timing tests without sleeps. */
export function createFakeClock(startMs = 0): FakeClock {
  let nowMs = startMs;
  let nextId = 1;
  const timers = new Map<number, { dueMs: number; callback: () => void }>();

  return {
    now: () => nowMs,
    setTimeout(callback, delayMs) {
      const id = nextId++;
      timers.set(id, { dueMs: nowMs + Math.max(0, delayMs), callback });
      return id;
    },
    clearTimeout(handle) {
      timers.delete(handle as number);
    },
    advance(ms) {
      const targetMs = nowMs + ms;
      for (;;) {
        let next: [number, { dueMs: number; callback: () => void }] | undefined;
        for (const entry of timers) if (entry[1].dueMs <= targetMs && (!next || entry[1].dueMs < next[1].dueMs)) next = entry;
        if (!next) break;
        timers.delete(next[0]);
        nowMs = next[1].dueMs;
        next[1].callback();
      }
      nowMs = targetMs;
    },
    get pendingTimers() {
      return timers.size;
    },
  };
}
