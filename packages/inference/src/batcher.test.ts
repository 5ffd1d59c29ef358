import { describe, expect, it } from 'vitest';
import { Batcher } from './batcher.ts';
import { createFakeClock } from './testing/fake-clock.ts';

/** Settles what a resolved promise's callbacks queued; no time passes. */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

function track<T>(promise: Promise<T>): { value: T | undefined; error: unknown; settled: boolean } {
  const state = { value: undefined as T | undefined, error: undefined as unknown, settled: false };
  promise.then(
    (value) => Object.assign(state, { value, settled: true }),
    (error: unknown) => Object.assign(state, { error, settled: true }),
  );
  return state;
}

function setup(maxBatchSize: number, maxBatchDelayMs: number) {
  const clock = createFakeClock();
  const batcher = new Batcher<string>({ maxBatchSize, maxBatchDelayMs, clock });
  const add = (value: string, key = 'k', priority = 5): void => batcher.add({ key, priority, value });
  return { clock, batcher, add };
}

describe('Batcher', () => {
  it('resolves at once when a key group reaches maxBatchSize', async () => {
    const { batcher, add, clock } = setup(3, 1000);
    const next = track(batcher.next());
    add('a');
    add('b');
    await flush();
    expect(next.settled).toBe(false);
    add('c');
    await flush();
    expect(next.value).toEqual(['a', 'b', 'c']);
    expect(clock.pendingTimers).toBe(0);
    expect(batcher.size).toBe(0);
  });

  it('hands out a group led by an item more urgent than urgentBelow at once, however full, and says which is most urgent', async () => {
    const { batcher, add } = setup(4, 1000);
    expect(batcher.mostUrgent()).toBeUndefined();
    add('bulk-1', 'k', 9);
    add('bulk-2', 'k', 9);
    add('other', 'j', 7);
    expect(batcher.mostUrgent()).toBe(7);
    // Nothing below 5 pending: the call waits as a plain next() would.
    const plain = track(batcher.next(undefined, { urgentBelow: 5 }));
    await flush();
    expect(plain.settled).toBe(false);
    add('urgent', 'k', 2);
    await flush();
    expect(plain.value).toEqual(['urgent', 'bulk-1', 'bulk-2']);
    expect(batcher.mostUrgent()).toBe(7);
  });

  it('resolves a full batch already pending when next() is called, leaving the rest', async () => {
    const { batcher, add } = setup(2, 1000);
    for (const v of ['a', 'b', 'c']) add(v);
    expect(await batcher.next()).toEqual(['a', 'b']);
    expect(batcher.size).toBe(1);
  });

  it('dispatches a partial batch exactly maxBatchDelayMs after its oldest item arrived', async () => {
    const { batcher, add, clock } = setup(4, 10);
    add('a');
    clock.advance(4);
    add('b');
    const next = track(batcher.next());
    clock.advance(5);
    await flush();
    expect(next.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(next.value).toEqual(['a', 'b']);
  });

  it('never mixes key groups; the overdue oldest item picks the group', async () => {
    const { batcher, add, clock } = setup(4, 10);
    add('a1', 'A');
    add('b1', 'B');
    add('a2', 'A');
    add('b2', 'B');
    const first = track(batcher.next());
    clock.advance(10);
    await flush();
    expect(first.value).toEqual(['a1', 'a2']);
    const second = track(batcher.next());
    await flush();
    // b1 arrived at the same instant as a1, so it is already overdue too.
    expect(second.value).toEqual(['b1', 'b2']);
  });

  it('serves a full group of another key before a younger partial group is due', async () => {
    const { batcher, add } = setup(2, 10);
    add('a1', 'A');
    add('b1', 'B');
    add('b2', 'B');
    expect(await batcher.next()).toEqual(['b1', 'b2']);
    expect(batcher.size).toBe(1);
  });

  it('orders a batch most urgent first, then oldest, and leaves the least urgent for later', async () => {
    const { batcher, add, clock } = setup(3, 10);
    add('p5', 'k', 5);
    add('p1-first', 'k', 1);
    add('p3', 'k', 3);
    add('p1-second', 'k', 1);
    expect(await batcher.next()).toEqual(['p1-first', 'p1-second', 'p3']);
    const rest = track(batcher.next());
    clock.advance(10);
    await flush();
    expect(rest.value).toEqual(['p5']);
  });

  it('rejects with the signal reason on abort, keeps the items and clears its timer', async () => {
    const { batcher, add, clock } = setup(4, 10);
    add('a');
    const controller = new AbortController();
    const next = track(batcher.next(controller.signal));
    await flush();
    expect(clock.pendingTimers).toBe(1);
    const reason = new Error('shutting down');
    controller.abort(reason);
    await flush();
    expect(next.error).toBe(reason);
    expect(clock.pendingTimers).toBe(0);
    expect(batcher.size).toBe(1);
    await expect(batcher.next(controller.signal)).rejects.toBe(reason);
    const again = track(batcher.next());
    clock.advance(10);
    await flush();
    expect(again.value).toEqual(['a']);
  });

  it('with maxBatchDelayMs 0 dispatches whatever is pending at once', async () => {
    const { batcher, add } = setup(8, 0);
    const waiting = track(batcher.next());
    add('a', 'A');
    await flush();
    expect(waiting.value).toEqual(['a']);
    add('b1', 'B');
    add('c', 'C');
    add('b2', 'B');
    expect(await batcher.next()).toEqual(['b1', 'b2']);
    expect(await batcher.next()).toEqual(['c']);
  });

  it('fills the next batch while the current one runs (pipelining)', async () => {
    const { batcher, add } = setup(2, 1000);
    add('a');
    add('b');
    const running = await batcher.next();
    add('c');
    add('d');
    add('e');
    expect(running).toEqual(['a', 'b']);
    expect(await batcher.next()).toEqual(['c', 'd']);
  });

  it('drain() removes and returns every pending item in arrival order', async () => {
    const { batcher, add, clock } = setup(2, 10);
    add('a', 'A', 9);
    add('b', 'B', 1);
    add('c', 'A', 1);
    expect(await batcher.next()).toEqual(['c', 'a']);
    add('d', 'C');
    expect(batcher.drain()).toEqual(['b', 'd']);
    expect(batcher.size).toBe(0);
    expect(clock.pendingTimers).toBe(0);
  });

  it('allows one waiting next() at a time and validates its options', async () => {
    const { batcher } = setup(2, 10);
    void batcher.next();
    await expect(batcher.next()).rejects.toThrow(/already waiting/);
    expect(() => new Batcher({ maxBatchSize: 0, maxBatchDelayMs: 1 })).toThrow(RangeError);
    expect(() => new Batcher({ maxBatchSize: 1, maxBatchDelayMs: -1 })).toThrow(RangeError);
    expect(() => batcher.add({ key: 'k', priority: Number.NaN, value: 'x' })).toThrow(RangeError);
  });
});

describe('Batcher with deadlines', () => {
  /** A batcher whose batches take 10 ms plus 1 ms per item. */
  function deadlineSetup(maxBatchSize: number, maxBatchDelayMs: number) {
    const clock = createFakeClock();
    const batcher = new Batcher<string>({ maxBatchSize, maxBatchDelayMs, clock, estimateRunMs: (items) => 10 + items });
    const add = (value: string, deadlineMs?: number, key = 'k'): void => batcher.add({ key, priority: 5, value, deadlineMs });
    return { clock, batcher, add };
  }

  it('closes a batch early so a job near its deadline finishes in time, rather than waiting out the delay', async () => {
    const { batcher, add, clock } = deadlineSetup(8, 100);
    const next = track(batcher.next());
    add('a');
    // Due at 50: a batch of 2 runs 12 ms, so it must leave by 38.
    add('b', 50);
    clock.advance(37);
    await flush();
    expect(next.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(next.value).toEqual(['a', 'b']);
  });

  it('waits out the delay when every deadline leaves room', async () => {
    const { batcher, add, clock } = deadlineSetup(8, 20);
    const next = track(batcher.next());
    add('a', 1_000);
    clock.advance(19);
    await flush();
    expect(next.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(next.value).toEqual(['a']);
  });

  it('serves the group with the earliest deadline first, even when another group is older', async () => {
    const { batcher, add, clock } = deadlineSetup(8, 100);
    add('old', undefined, 'x');
    clock.advance(10);
    add('urgent', 40, 'y');
    // 40 − (10 + 1) = 29 on the clock.
    const next = track(batcher.next());
    clock.advance(18);
    await flush();
    expect(next.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(next.value).toEqual(['urgent']);
    expect(batcher.size).toBe(1);
  });

  it('dispatches at once an item whose deadline has already no room, and forgets deadlines of items handed out', async () => {
    const { batcher, add, clock } = deadlineSetup(8, 100);
    add('late', 5);
    expect(await batcher.next()).toEqual(['late']);
    add('next');
    const next = track(batcher.next());
    clock.advance(99);
    await flush();
    expect(next.settled).toBe(false);
    clock.advance(1);
    await flush();
    expect(next.value).toEqual(['next']);
  });

  it('applies new limits to the batches not yet handed out', async () => {
    const { batcher, add } = deadlineSetup(8, 1_000);
    for (const v of ['a', 'b', 'c']) add(v);
    const next = track(batcher.next());
    await flush();
    expect(next.settled).toBe(false);
    batcher.setLimits({ maxBatchSize: 2, maxBatchDelayMs: 1_000 });
    await flush();
    expect(next.value).toEqual(['a', 'b']);
  });
});
