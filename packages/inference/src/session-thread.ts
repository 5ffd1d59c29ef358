/**
 * Entry point of a session thread (worker_threads). onnxruntime-node's
 * session.run blocks the event loop of the thread it runs on for the whole
 * inference, so each session lives here and the main thread stays free for
 * queue and database I/O. Requests are handled one at a time, in order.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createSessionWithFallback, SessionLoadError } from './create-session.ts';
import { runSessionBatch } from './run-batch.ts';
import { listBuffers, postWithTransfer, type SessionThreadOptions, type ThreadReply, type ThreadRequest } from './thread-protocol.ts';

const port = parentPort;
if (!port) throw new Error('session-thread.ts must run inside a worker thread');

const post = (reply: ThreadReply, transfer: ArrayBuffer[] = []): void => postWithTransfer(port, reply, transfer);
const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

async function main(): Promise<void> {
  let opened;
  try {
    opened = await createSessionWithFallback(workerData as SessionThreadOptions);
  } catch (err) {
    const failedProviders = err instanceof SessionLoadError ? err.failedProviders : [];
    post({ type: 'load-failed', message: message(err), failedProviders });
    return;
  }
  const { session, provider, failedProviders } = opened;

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
  port!.on('message', (request: ThreadRequest) => {
    queue = queue.then(() => handle(request));
  });
  post({ type: 'ready', provider, failedProviders, inputNames: [...session.inputNames], outputNames: [...session.outputNames] });
}

void main();
