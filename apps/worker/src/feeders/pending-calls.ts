/**
 * Calls sent over a port and not yet answered, by id: each end of a feeder's port keeps one for the requests it makes.
 * Once the other end is gone, every pending call rejects, and so does every later one.
 */
export function createPendingCalls() {
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  let nextId = 1;
  let gone: Error | undefined;
  return {
    /** A new call's id and its answer; `send` posts it (a send that throws rejects the call). */
    call<T>(send: (id: number) => void): Promise<T> {
      if (gone) return Promise.reject(gone);
      const id = nextId++;
      return new Promise<T>((resolve, reject) => {
        pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
        try {
          send(id);
        } catch (err) {
          pending.delete(id);
          reject(err instanceof Error ? err : new Error(String(err)));
        }
      });
    },
    /** The answer to call `id`; one for a call no longer pending is ignored. */
    settle(id: number, outcome: { ok: true; value: unknown } | { ok: false; error: Error }): void {
      const p = pending.get(id);
      if (!p) return;
      pending.delete(id);
      if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.error);
    },
    /** The other end is gone: every call pending and every later one rejects with `err`. */
    failAll(err: Error): void {
      gone ??= err;
      for (const [id, p] of pending) {
        pending.delete(id);
        p.reject(err);
      }
    },
  };
}
