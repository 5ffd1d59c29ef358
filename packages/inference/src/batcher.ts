import { systemClock, type Clock } from './clock.ts';

export interface BatcherOptions {
  /** Most items in one batch; a key group that reaches it is dispatched at once. */
  maxBatchSize: number;
  /** Longest the oldest pending item waits for its batch to fill; 0 dispatches whatever is pending at once. */
  maxBatchDelayMs: number;
  /**
   * Expected run time of a batch of this many items; with it, a group holding
   * an item with a deadline is dispatched early enough to finish by it.
   */
  estimateRunMs?: (items: number) => number | undefined;
  /** @default the system clock */
  clock?: Clock;
}

export interface BatchItem<T> {
  /** Items batch together only when their keys are equal (same model version and input shapes). */
  key: string;
  /** Lower is more urgent. */
  priority: number;
  /** When its result is due, on the batcher's clock: its batch is dispatched in time to finish by then. */
  deadlineMs?: number;
  /** Rows it adds along the batch dimension (run-time estimates count these). @default 1 */
  items?: number;
  value: T;
}

interface Entry<T> extends BatchItem<T> {
  seq: number;
  addedAtMs: number;
  taken: boolean;
}

interface Waiter<T> {
  resolve: (batch: T[]) => void;
  signal: AbortSignal | undefined;
  onAbort: () => void;
  /** NextOptions.urgentBelow. */
  urgentBelow: number | undefined;
}

export interface NextOptions {
  /**
   * A group led by an item more urgent than this (a priority below it) is handed out at once, however full: a batch
   * that overtakes the batches in flight for an urgent item. Without such an item, the call waits as without it.
   */
  urgentBelow?: number;
}

const isMoreUrgent = (a: Entry<unknown>, b: Entry<unknown>): boolean => a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);

/**
 * Groups pending items into batches of one key. `next()` resolves as soon as
 * a key group holds maxBatchSize items, when the oldest pending item has
 * waited maxBatchDelayMs (then with its group), or when an item's deadline
 * leaves just the expected run time of its group's batch (then with its
 * group, however full), or, for a caller that asks (NextOptions.urgentBelow), as soon as an item more urgent than it
 * waits (then with its group, however full). Inside a batch the most urgent items come first,
 * then the oldest. Items keep arriving while the caller runs a batch, so the
 * next call may resolve at once with a full one.
 */
export class Batcher<T> {
  #maxBatchSize: number;
  #maxBatchDelayMs: number;
  readonly #clock: Clock;
  readonly #estimateRunMs: ((items: number) => number | undefined) | undefined;
  /** Entries with a deadline, earliest first; taken ones are skipped lazily. */
  #deadlines: Entry<T>[] = [];
  /** Each group is kept sorted most urgent first. */
  readonly #groups = new Map<string, Entry<T>[]>();
  /** Every entry in arrival order; entries taken from the middle are skipped lazily. */
  #arrivals: Entry<T>[] = [];
  #head = 0;
  #size = 0;
  #seq = 0;
  #waiter: Waiter<T> | undefined;
  #timer: { handle: unknown; dueMs: number } | undefined;

  constructor(options: BatcherOptions) {
    this.#maxBatchSize = 1;
    this.#maxBatchDelayMs = 0;
    this.setLimits(options);
    this.#clock = options.clock ?? systemClock;
    this.#estimateRunMs = options.estimateRunMs;
  }

  /** Changes the batch size and delay for the batches not yet handed out (adaptive batching). */
  setLimits(limits: Pick<BatcherOptions, 'maxBatchSize' | 'maxBatchDelayMs'>): void {
    if (!Number.isInteger(limits.maxBatchSize) || limits.maxBatchSize < 1)
      throw new RangeError(`maxBatchSize must be an integer ≥ 1, got ${limits.maxBatchSize}`);
    if (!Number.isFinite(limits.maxBatchDelayMs) || limits.maxBatchDelayMs < 0)
      throw new RangeError(`maxBatchDelayMs must be a number ≥ 0, got ${limits.maxBatchDelayMs}`);
    this.#maxBatchSize = limits.maxBatchSize;
    this.#maxBatchDelayMs = limits.maxBatchDelayMs;
    if (this.#waiter) this.#dispatch();
  }

  /** Items pending, not yet handed out in a batch. */
  get size(): number {
    return this.#size;
  }

  /** The priority of the most urgent item pending; undefined when none is. */
  mostUrgent(): number | undefined {
    let best: number | undefined;
    for (const group of this.#groups.values()) if (best === undefined || group[0]!.priority < best) best = group[0]!.priority;
    return best;
  }

  add(item: BatchItem<T>): void {
    if (!Number.isFinite(item.priority)) throw new RangeError(`priority must be a finite number, got ${item.priority}`);
    const entry: Entry<T> = { ...item, seq: this.#seq++, addedAtMs: this.#clock.now(), taken: false };
    const group = this.#groups.get(entry.key) ?? [];
    this.#groups.set(entry.key, group);
    // Binary search for the first entry less urgent than this one; equal priorities stay in arrival order.
    let lo = 0;
    let hi = group.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (isMoreUrgent(group[mid]!, entry)) lo = mid + 1;
      else hi = mid;
    }
    group.splice(lo, 0, entry);
    if (entry.deadlineMs !== undefined) {
      const at = this.#deadlines.findLastIndex((e) => e.deadlineMs! <= entry.deadlineMs!);
      this.#deadlines.splice(at + 1, 0, entry);
    }
    this.#arrivals.push(entry);
    this.#size++;
    this.#dispatch();
  }

  /** The next batch. One call may wait at a time; an abort rejects it with the signal's reason and keeps the items. */
  next(signal?: AbortSignal, options: NextOptions = {}): Promise<T[]> {
    if (this.#waiter) return Promise.reject(new Error('Batcher.next() is already waiting; call it again after it resolves'));
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T[]>((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiter = undefined;
        this.#clearTimer();
        reject(signal!.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiter = { resolve, signal, onAbort, urgentBelow: options.urgentBelow };
      this.#dispatch();
    });
  }

  /** Removes and returns every pending item in arrival order (shutdown hands them back). */
  drain(): T[] {
    const values = this.#arrivals
      .slice(this.#head)
      .filter((e) => !e.taken)
      .map((e) => e.value);
    this.#groups.clear();
    this.#deadlines = [];
    this.#arrivals = [];
    this.#head = 0;
    this.#size = 0;
    this.#clearTimer();
    return values;
  }

  #oldest(): Entry<T> | undefined {
    while (this.#head < this.#arrivals.length && this.#arrivals[this.#head]!.taken) this.#head++;
    if (this.#head > 1024 && this.#head * 2 > this.#arrivals.length) {
      this.#arrivals = this.#arrivals.slice(this.#head);
      this.#head = 0;
    }
    return this.#arrivals[this.#head];
  }

  /** The pending item with the earliest deadline, and when its group must be dispatched to finish by it. */
  #deadlineDue(): { entry: Entry<T>; dueMs: number } | undefined {
    while (this.#deadlines.length > 0 && this.#deadlines[0]!.taken) this.#deadlines.shift();
    const entry = this.#deadlines[0];
    if (!entry) return undefined;
    const group = this.#groups.get(entry.key)!;
    const items = group.slice(0, this.#maxBatchSize).reduce((n, e) => n + (e.items ?? 1), 0);
    return { entry, dueMs: entry.deadlineMs! - (this.#estimateRunMs?.(items) ?? 0) };
  }

  /** The group led by the most urgent item, when that item's priority is below `urgentBelow`. */
  #urgentGroup(urgentBelow: number | undefined): Entry<T>[] | undefined {
    if (urgentBelow === undefined) return undefined;
    let best: Entry<T>[] | undefined;
    for (const group of this.#groups.values()) {
      if (group[0]!.priority < urgentBelow && (!best || isMoreUrgent(group[0]!, best[0]!))) best = group;
    }
    return best;
  }

  #mostUrgentFullGroup(): Entry<T>[] | undefined {
    let best: Entry<T>[] | undefined;
    for (const group of this.#groups.values()) {
      if (group.length >= this.#maxBatchSize && (!best || isMoreUrgent(group[0]!, best[0]!))) best = group;
    }
    return best;
  }

  #dispatch(): void {
    const waiter = this.#waiter;
    if (!waiter) return;
    const oldest = this.#oldest();
    if (!oldest) return this.#clearTimer();
    const dueMs = oldest.addedAtMs + this.#maxBatchDelayMs;
    const deadline = this.#deadlineDue();
    const now = this.#clock.now();
    // An urgent item the caller asked for comes first, then a deadline; an overdue item is served before a full group
    // of another key, so no key starves.
    const group =
      this.#urgentGroup(waiter.urgentBelow) ??
      (deadline && now >= deadline.dueMs ? this.#groups.get(deadline.entry.key) : now >= dueMs ? this.#groups.get(oldest.key) : this.#mostUrgentFullGroup());
    if (!group) return this.#armTimer(Math.min(dueMs, deadline?.dueMs ?? Infinity));
    const batch = group.splice(0, this.#maxBatchSize);
    if (group.length === 0) this.#groups.delete(batch[0]!.key);
    for (const entry of batch) entry.taken = true;
    this.#size -= batch.length;
    this.#waiter = undefined;
    waiter.signal?.removeEventListener('abort', waiter.onAbort);
    this.#clearTimer();
    waiter.resolve(batch.map((e) => e.value));
  }

  #armTimer(dueMs: number): void {
    if (this.#timer?.dueMs === dueMs) return;
    this.#clearTimer();
    const handle = this.#clock.setTimeout(
      () => {
        this.#timer = undefined;
        this.#dispatch();
      },
      Math.max(0, dueMs - this.#clock.now()),
    );
    this.#timer = { handle, dueMs };
  }

  #clearTimer(): void {
    if (this.#timer) this.#clock.clearTimeout(this.#timer.handle);
    this.#timer = undefined;
  }
}
