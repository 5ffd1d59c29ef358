/**
 * The serving loop of a session thread, for entry modules: session-thread.ts
 * serves onnxruntime sessions with it, and the bench's timed device serves a
 * stand-in through the same messages. Loads onnxruntime: import it only
 * inside a worker thread.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createSessionWithFallback, SessionLoadError, type CreatedSession } from './create-session.ts';
import { runSessionBatch, type RunnableSession } from './run-batch.ts';
import { listBuffers, postWithTransfer, type SessionLoadNotes, type SessionThreadOptions, type ThreadReply, type ThreadRequest } from './thread-protocol.ts';

export { createSessionWithFallback, SessionLoadError, type CreatedSession, type RunnableSession, type SessionThreadOptions };

/** What a thread serves: a session that runs batches and is released when the thread closes. */
export interface ServedSession extends SessionLoadNotes {
  session: RunnableSession & { release(): Promise<void> };
  provider: string;
  failedProviders: CreatedSession['failedProviders'];
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Opens the session `open` gives for this thread's options, then runs its requests one at a time, in order. */
export async function serveSessionThread(open: (options: SessionThreadOptions) => Promise<ServedSession> = createSessionWithFallback): Promise<void> {
  const port = parentPort;
  if (!port) throw new Error('a session thread must run inside a worker thread');
  const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => postWithTransfer(port, reply, transfer);
  let opened;
  try {
    opened = await open(workerData as SessionThreadOptions);
  } catch (err) {
    const failedProviders = err instanceof SessionLoadError ? err.failedProviders : [];
    post({ type: 'load-failed', message: message(err), failedProviders });
    return;
  }
  const { session, provider, failedProviders, providerPairing, placement } = opened;

  async function handle(request: ThreadRequest): Promise<void> {
    if (request.type === 'close') {
      // A failed release must still close the thread; the process reclaims the memory either way.
      await session.release().catch(() => undefined);
      post({ type: 'closed', id: request.id });
      port!.close();
      return;
    }
    try {
      const result = await runSessionBatch(session, request.jobs);
      // Output tensors of one job are views over onnxruntime's buffers; each buffer moves once and the views come with it.
      const outputs = result.results.flatMap((r) => (r.ok ? r.outputs : []));
      post({ type: 'result', id: request.id, result }, listBuffers(outputs));
    } catch (err) {
      post({ type: 'failed', id: request.id, message: message(err) });
    }
  }

  let queue = Promise.resolve();
  port.on('message', (request: ThreadRequest) => {
    queue = queue.then(() => handle(request));
  });
  post({ type: 'ready', provider, failedProviders, providerPairing, placement, inputNames: [...session.inputNames], outputNames: [...session.outputNames] });
}
