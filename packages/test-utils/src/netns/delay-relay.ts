import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';

export interface DelayRelay {
  /** Milliseconds each chunk is held, each way; 0 forwards at once. Applies to chunks read from now on. */
  setDelayMs(ms: number): void;
  close(): Promise<void>;
}

/** Forwards `from` to `to`, each chunk `delayMs()` ms after it arrived, in order (a shorter delay never overtakes a longer one). */
function forwardDelayed(from: Socket, to: Socket, delayMs: () => number): void {
  const queue: Array<{ chunk: Buffer; dueMs: number }> = [];
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    timer = undefined;
    while (queue.length > 0 && queue[0]!.dueMs <= Date.now()) to.write(queue.shift()!.chunk);
    if (queue.length > 0) timer = setTimeout(flush, queue[0]!.dueMs - Date.now());
  };
  from.on('data', (chunk: Buffer) => {
    const dueMs = Math.max(Date.now() + delayMs(), queue.at(-1)?.dueMs ?? 0);
    queue.push({ chunk, dueMs });
    if (!timer) flush();
  });
  from.on('end', () => {
    const end = () => (queue.length > 0 ? setTimeout(end, 5) : to.end());
    end();
  });
}

/**
 * A TCP relay that adds latency (tc netem is not everywhere): put it on the
 * path (clients connect to it, it connects to the server) and raise the delay.
 */
export async function startDelayRelay(o: { listen: { host: string; port: number }; target: { host: string; port: number } }): Promise<DelayRelay> {
  let delayMs = 0;
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(o.target);
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.once('close', () => upstream.destroy());
    upstream.once('close', () => client.destroy());
    forwardDelayed(client, upstream, () => delayMs);
    forwardDelayed(upstream, client, () => delayMs);
  });
  server.listen(o.listen.port, o.listen.host);
  await once(server, 'listening');
  return {
    setDelayMs: (ms) => void (delayMs = ms),
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
