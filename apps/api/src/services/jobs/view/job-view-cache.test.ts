import { describe, expect, it } from 'vitest';
import type { JobRecord } from '@inferq/db';
import type { JobEvents, JobWatch, QueueJobEvent } from '@inferq/queue';
import { createJobViewCache } from './job-view-cache.ts';

/** Job events by hand: `emit` reports an event for a job to its open watches. */
function fakeEvents() {
  const open = new Map<string, Set<{ woken?: QueueJobEvent }>>();
  const events: JobEvents = {
    listen: async () => {},
    watch(jobId) {
      const state: { woken?: QueueJobEvent } = {};
      const set = open.get(jobId) ?? new Set();
      set.add(state);
      open.set(jobId, set);
      const watch: JobWatch = {
        wait: async () => undefined,
        take: () => {
          const e = state.woken;
          state.woken = undefined;
          return e;
        },
        stop: () => set.delete(state),
      };
      return watch;
    },
    watchCount: () => [...open.values()].reduce((n, s) => n + s.size, 0),
    close: async () => {},
  };
  const emit = (jobId: string, event: QueueJobEvent) => open.get(jobId)?.forEach((w) => (w.woken = event));
  return { events, emit };
}

const job = (status: JobRecord['status']): JobRecord => ({ id: 'j1', status, modelName: 'mlp', outputs: null }) as unknown as JobRecord;

/** A row that reads as `status` and counts its reads. */
function row(status: JobRecord['status']) {
  const r = { status, reads: 0, read: async () => (r.reads++, job(r.status)) };
  return r;
}

describe('the job view cache', () => {
  it('serves a finished job from memory, and reads it again once forgotten', async () => {
    const { events } = fakeEvents();
    const cache = createJobViewCache({ events, ttlMs: 60_000 });
    const r = row('succeeded');
    for (let i = 0; i < 5; i++) expect((await cache.get('j1', r.read))?.status).toBe('succeeded');
    expect(r.reads).toBe(1);
    cache.forget(['j1']);
    await cache.get('j1', r.read);
    expect(r.reads).toBe(2);
  });

  it('reads an unfinished job twice (the watch starts after the first), then only when the queue reports it', async () => {
    const { events, emit } = fakeEvents();
    const cache = createJobViewCache({ events, ttlMs: 60_000 });
    const r = row('queued');
    for (let i = 0; i < 5; i++) await cache.get('j1', r.read);
    expect(r.reads).toBe(2);
    r.status = 'running';
    emit('j1', 'active');
    expect((await cache.get('j1', r.read))?.status).toBe('running');
    expect((await cache.get('j1', r.read))?.status).toBe('running');
    expect(r.reads).toBe(3);
    r.status = 'succeeded';
    emit('j1', 'completed');
    expect((await cache.get('j1', r.read))?.status).toBe('succeeded');
    // Finished: the watch is given back.
    expect(events.watchCount()).toBe(0);
    await cache.get('j1', r.read);
    expect(r.reads).toBe(4);
  });

  it('keeps nothing past its time, and nothing at all with a time of 0', async () => {
    const { events } = fakeEvents();
    const short = createJobViewCache({ events, ttlMs: 20 });
    const r = row('succeeded');
    await short.get('j1', r.read);
    await new Promise((resolve) => setTimeout(resolve, 40));
    await short.get('j1', r.read);
    expect(r.reads).toBe(2);
    const off = createJobViewCache({ events, ttlMs: 0 });
    await off.get('j1', r.read);
    await off.get('j1', r.read);
    expect(r.reads).toBe(4);
  });

  it('does not keep a job that is not there', async () => {
    const { events } = fakeEvents();
    const cache = createJobViewCache({ events, ttlMs: 60_000 });
    let reads = 0;
    const missing = async () => (reads++, undefined);
    expect(await cache.get('j1', missing)).toBeUndefined();
    expect(await cache.get('j1', missing)).toBeUndefined();
    expect(reads).toBe(2);
  });
});
