/**
 * Entry point of a session thread (worker_threads). onnxruntime-node's
 * session.run blocks the event loop of the thread it runs on for the whole
 * inference, so each session lives here and the main thread stays free for
 * queue and database I/O. Requests are handled one at a time, in order.
 */
import { serveSessionThread } from './session-thread-server.ts';

void serveSessionThread();
