import http from 'node:http';
import https from 'node:https';
import { parseWebhookUrl, publicOnlyLookup } from '../services/webhooks/url-policy.ts';

interface WebhookResponse {
  /** The receiver's HTTP status; null when none came. */
  statusCode: number | null;
  /** Why no status came (timeout, refused address, connection error). */
  error: string | null;
  durationMs: number;
}

export interface WebhookSender {
  /** One POST; never throws. Redirects are not followed (a 3xx is a failed attempt). */
  post(url: string, headers: Record<string, string>, body: string): Promise<WebhookResponse>;
  /** Closes the kept-alive connections. */
  close(): void;
}

/**
 * POSTs with node:http, not fetch: its `lookup` option lets the connection go
 * only to an address the URL policy checked. Agents are this sender's own, so
 * connections opened under another policy are never reused.
 */
export function createWebhookSender(options: { timeoutMs: number; allowPrivate: boolean }): WebhookSender {
  const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

  function send(url: URL, headers: Record<string, string>, body: string): Promise<number> {
    const client = url.protocol === 'https:' ? { request: https.request, agent: agents.https } : { request: http.request, agent: agents.http };
    return new Promise((resolve, reject) => {
      const req = client.request(
        url,
        {
          method: 'POST',
          agent: client.agent,
          headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
          lookup: options.allowPrivate ? undefined : publicOnlyLookup,
          signal: AbortSignal.timeout(options.timeoutMs),
        },
        (res) => {
          // The status is the answer; the body is drained unread (the timeout still bounds it).
          res.on('error', () => {});
          res.resume();
          resolve(res.statusCode ?? 0);
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  }

  return {
    async post(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      try {
        const statusCode = await send(parseWebhookUrl(url, options.allowPrivate), headers, body);
        return { statusCode, error: null, durationMs: elapsed() };
      } catch (err) {
        const error =
          (err as Error).name === 'TimeoutError' || (err as Error).name === 'AbortError' ? `no answer within ${options.timeoutMs} ms` : (err as Error).message;
        return { statusCode: null, error: error.slice(0, 500), durationMs: elapsed() };
      }
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
