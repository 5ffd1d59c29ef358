import { isTerminalStatus, type StoredTensor } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import { QUEUE_JOB_EVENTS, type JobEvents, type JobWatch } from '@inferq/queue';
import { LRUCache } from 'lru-cache';

/** Memory the views may take, their inline output bytes counted. */
const MAX_BYTES = 64 * 2 ** 20;
/** What a view costs beyond its inline bytes. */
const ENTRY_BYTES = 2_048;

export interface JobViewCache {
  /** A job's view (any owner's; the caller checks), from memory while it is known not to have changed, else from `read`. */
  get(id: string, read: () => Promise<JobRecord | undefined>): Promise<JobRecord | undefined>;
  /** Forgets jobs this process has just changed (a cancel, a purge, an input drop). */
  forget(ids: Iterable<string>): void;
}

interface Entry {
  record: JobRecord;
  /** Unfinished jobs: wakes on any queue event for the job. */
  watch?: JobWatch;
  /** Whether the watch started before `record` was read, so that no change since then can have gone unseen. */
  trusted: boolean;
}

const inlineBytes = (tensors: StoredTensor[] | null): number => (tensors ?? []).reduce((n, t) => n + (t.data?.byteLength ?? 0), 0);

/**
 * What a poll answers without Postgres. A finished job changes only by a
 * purge, a delete or an input drop: its view is kept `ttlMs`, and one this
 * process makes is forgotten at once (another API process's shows within
 * `ttlMs`). An unfinished job changes when a worker fetches, finishes or
 * gives it back, and the queue reports each of those on the model's event
 * stream: its view is kept until an event for it arrives, and at most `ttlMs`
 * (an event missed while the stream reconnects). The first read of an
 * unfinished job starts the watch; from the second on, its view is trusted.
 * Staleness is so bounded by the event's delivery for a job's end, and by
 * `ttlMs` for a purge elsewhere and for `running` when the worker's claim
 * commits after the fetch's event has been heard. `ttlMs` 0: every poll reads.
 */
export function createJobViewCache(o: { events: JobEvents; ttlMs: number; onRead?: (source: 'memory' | 'postgres') => void }): JobViewCache {
  const fromPostgres = (read: () => Promise<JobRecord | undefined>) => {
    o.onRead?.('postgres');
    return read();
  };
  const cache = new LRUCache<string, Entry>({
    maxSize: MAX_BYTES,
    sizeCalculation: (e) => ENTRY_BYTES + inlineBytes(e.record.outputs),
    ttl: Math.max(1, o.ttlMs),
    dispose: (e) => e.watch?.stop(),
    // Replacing an entry keeps its watch when the new one carries it on (keep() stops one that is replaced).
    noDisposeOnSet: true,
  });

  function keep(entry: Entry): void {
    const replaced = cache.peek(entry.record.id)?.watch;
    if (replaced && replaced !== entry.watch) replaced.stop();
    cache.set(entry.record.id, entry);
  }

  /** Starts watching an unfinished job's queue events; none when the model's stream cannot be had (then nothing is kept). */
  async function watch(record: JobRecord): Promise<JobWatch | undefined> {
    try {
      await o.events.listen(record.modelName);
      return o.events.watch(record.id, { events: QUEUE_JOB_EVENTS });
    } catch {
      return undefined;
    }
  }

  return {
    async get(id, read) {
      if (o.ttlMs <= 0) return fromPostgres(read);
      const known = cache.get(id);
      const changed = known?.watch?.take();
      if (known?.trusted && changed === undefined) {
        o.onRead?.('memory');
        return known.record;
      }
      // Reads meanwhile go to Postgres too; a watch already running started before this read, so it keeps counting.
      if (known) known.trusted = false;
      const carried = known?.watch;
      const record = await fromPostgres(read);
      if (!record || isTerminalStatus(record.status)) {
        carried?.stop();
        if (record) keep({ record, trusted: true });
        else cache.delete(id);
        return record;
      }
      const w = carried ?? (await watch(record));
      if (w) keep({ record, watch: w, trusted: carried !== undefined });
      return record;
    },
    forget(ids) {
      for (const id of ids) cache.delete(id);
    },
  };
}
