import type { Worker } from 'node:worker_threads';
import { ModelLoadError } from './model-load-error.ts';
import { postWithTransfer, type ReadyReply, type RequestReply, type ThreadReply, type ThreadRequest } from './thread-protocol.ts';

interface Pending {
  resolve: (reply: RequestReply) => void;
  reject: (err: Error) => void;
}

/**
 * The main-thread end of a session thread: correlates replies with requests
 * by id, and rejects everything pending when the thread errors or exits, so a
 * crashing thread fails its batch instead of leaving it waiting forever.
 */
export class ThreadClient {
  readonly ready: Promise<ReadyReply>;
  #worker: Worker;
  #pending = new Map<number, Pending>();
  #nextId = 1;
  #failure: Error | undefined;
  #settleReady!: { resolve: (reply: ReadyReply) => void; reject: (err: Error) => void };

  constructor(worker: Worker) {
    this.#worker = worker;
    this.ready = new Promise((resolve, reject) => (this.#settleReady = { resolve, reject }));
    worker.on('message', (reply: ThreadReply) => this.#onReply(reply));
    worker.on('error', (err: Error) => this.#fail(new Error(`session thread crashed: ${err.message}`, { cause: err })));
    worker.on('exit', (code: number) => this.#fail(new Error(`session thread exited with code ${code}`)));
  }

  /** Set once the thread has errored or exited; every later request rejects with it. */
  get failure(): Error | undefined {
    return this.#failure;
  }

  request(build: (id: number) => ThreadRequest, transfer: ArrayBuffer[] = []): Promise<RequestReply> {
    if (this.#failure) return Promise.reject(this.#failure);
    const id = this.#nextId++;
    return new Promise<RequestReply>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      // Held only while a request is in flight, so an idle session never keeps the process alive.
      this.#worker.ref();
      try {
        postWithTransfer(this.#worker, build(id), transfer);
      } catch (err) {
        this.#settle(id)?.reject(err instanceof Error ? err : new Error(String(err)));
      }
    });
  }

  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    this.#pending.delete(id);
    if (this.#pending.size === 0) this.#worker.unref();
    return pending;
  }

  #onReply(reply: ThreadReply): void {
    if (reply.type === 'ready') {
      this.#worker.unref();
      this.#settleReady.resolve(reply);
    } else if (reply.type === 'load-failed') {
      this.#settleReady.reject(new ModelLoadError(reply.message, reply.failedProviders));
    } else {
      this.#settle(reply.id)?.resolve(reply);
    }
  }

  #fail(err: Error): void {
    if (this.#failure) return;
    this.#failure = err;
    this.#settleReady.reject(new ModelLoadError(`model session thread stopped before the model loaded: ${err.message}`, [], { cause: err }));
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(err);
  }
}
