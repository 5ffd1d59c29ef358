import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { registerGracefulClose } from './graceful-close.ts';

describe('closing the API server', () => {
  it('ends once the request in flight is answered, not when its keep-alive connection times out', async () => {
    // A keep-alive far past any test's timeout: a close that waited for it would hang the test.
    const app = Fastify({ keepAliveTimeout: 600_000, return503OnClosing: true });
    registerGracefulClose(app as never);
    let started!: () => void;
    const running = new Promise<void>((r) => (started = r));
    let finish!: () => void;
    const gate = new Promise<void>((r) => (finish = r));
    app.get('/', async () => {
      started();
      await gate;
      return { ok: true };
    });
    // The request is answered once closing has begun (after the plugin's own preClose).
    app.addHook('preClose', (done) => {
      finish();
      done();
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as { port: number };
    const reply = fetch(`http://127.0.0.1:${port}/`);
    await running;

    const closed = app.close();
    const res = await reply;
    expect(res.status).toBe(200);
    expect(res.headers.get('connection')).toBe('close');
    await res.text();
    await closed;
  }, 30_000);
});
