import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface WebhookReceiver {
  url: string;
  /** The statuses posted for a job (the `webhook-id` header is the job id), in arrival order. */
  statusesOf(jobId: string): string[];
  close(): Promise<void>;
}

/** An HTTP endpoint that answers 200 to every webhook and records what each job's posts said. */
export async function startWebhookReceiver(host = '127.0.0.1'): Promise<WebhookReceiver> {
  const received = new Map<string, string[]>();
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (c: string) => (body += c));
    req.on('end', () => {
      const id = String(req.headers['webhook-id']);
      const status = (JSON.parse(body) as { status?: string }).status ?? 'no status';
      received.set(id, [...(received.get(id) ?? []), status]);
      res.writeHead(200).end();
    });
  }).listen(0, host);
  await once(server, 'listening');
  return {
    url: `http://${host}:${(server.address() as AddressInfo).port}/hook`,
    statusesOf: (jobId) => received.get(jobId) ?? [],
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
