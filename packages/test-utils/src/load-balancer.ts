import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface LoadBalancer {
  baseUrl: string;
  /** Sends new requests to `upstream` too (an endpoint that turned ready). */
  add(upstream: string): void;
  /** Sends no new request to `upstream` (an endpoint removed before its pod gets SIGTERM); requests in flight finish. */
  remove(upstream: string): void;
  close(): Promise<void>;
}

/**
 * A round-robin HTTP proxy standing in for a Kubernetes Service (or NGINX)
 * in front of API replicas, so a test can roll them the way a Deployment
 * does: add the new endpoint, remove the old one, then stop its process.
 */
export async function startLoadBalancer(upstreams: string[]): Promise<LoadBalancer> {
  const live = [...upstreams];
  let next = 0;
  const server = createServer((req, res) => void forward(req, res));
  async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    try {
      for await (const chunk of req) chunks.push(chunk as Buffer);
    } catch {
      // The client went away while sending: nothing to forward, no one to answer.
      return void res.destroy();
    }
    const upstream = live[next++ % live.length];
    if (!upstream) return void res.writeHead(502).end();
    try {
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection' && k !== 'content-length')) as Record<
        string,
        string
      >;
      const reply = await fetch(`${upstream}${req.url}`, { method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined });
      // fetch has decoded the body already: its encoding and length headers no longer apply.
      const replyHeaders: Record<string, string> = {};
      reply.headers.forEach((value, key) => {
        if (key !== 'content-encoding' && key !== 'content-length') replyHeaders[key] = value;
      });
      res.writeHead(reply.status, replyHeaders).end(Buffer.from(await reply.arrayBuffer()));
    } catch (err) {
      res.writeHead(502, { 'content-type': 'text/plain' }).end(`upstream ${upstream} failed: ${(err as Error).message}`);
    }
  }
  // As long as Fastify's (the API's) 72 s: with Node's 5 s default, a client's
  // pooled connection can be closed just as it sends on it, and fetch fails.
  server.keepAliveTimeout = 72_000;
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    add: (upstream) => void live.push(upstream),
    remove: (upstream) => void live.splice(live.indexOf(upstream), 1),
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
