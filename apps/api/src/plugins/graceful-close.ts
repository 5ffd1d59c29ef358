import type { FastifyInstance } from 'fastify';

/** How often, while closing, the connections that have gone idle are closed. */
const REAP_INTERVAL_MS = 100;

/**
 * Lets `close()` end as soon as the requests in flight are answered. Node's server.close() and Fastify close the
 * keep-alive connections idle at that moment only: one whose request was still running stays open after its reply
 * until its keep-alive timeout (72 s), longer than the shutdown's grace, and the process is then killed mid-close.
 * From preClose on, a reply tells its client not to reuse the connection (`Connection: close`; Fastify's 503 for a
 * request arriving while closing already does), and connections that have gone idle are closed as they do.
 */
export function registerGracefulClose(server: FastifyInstance): void {
  let closing = false;
  server.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  server.addHook('preClose', (done) => {
    closing = true;
    const reaper = setInterval(() => server.server.closeIdleConnections(), REAP_INTERVAL_MS);
    server.server.once('close', () => clearInterval(reaper));
    done();
  });
}
