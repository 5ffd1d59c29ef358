import autocannon from 'autocannon';
import { percentile } from '../stats.ts';

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  connections: number;
  durationS: number;
  /** Paths taken in turn, one a request, in place of the url's (polls of many jobs). */
  paths?: readonly string[];
}

export interface LoadResult {
  /** 2xx answers. */
  requests: number;
  reqPerS: number;
  p50Ms: number | null;
  p99Ms: number | null;
}

/**
 * Closed-loop load from this process: each connection sends its next request
 * once the last one is answered. Latencies are taken per response at full
 * precision (autocannon's histogram keeps whole milliseconds). Any non-2xx
 * answer or socket error fails the run, so a figure never counts errors.
 */
export function runLoad(o: LoadOptions): Promise<LoadResult> {
  // The load generator shares this process with the scenario's setup (200k
  // queue jobs built here, say): collect that garbage now, not mid-run.
  (globalThis as { gc?: () => void }).gc?.();
  const latenciesMs: number[] = [];
  return new Promise((resolve, reject) => {
    let next = 0;
    const paths = o.paths;
    const requests = paths ? [{ setupRequest: (req: { path?: string }) => ({ ...req, path: paths[next++ % paths.length] }) }] : undefined;
    const instance = autocannon(
      { url: o.url, method: o.method ?? 'GET', headers: o.headers, body: o.body, connections: o.connections, duration: o.durationS, requests },
      (err, result) => {
        if (err) return reject(err);
        if (result.non2xx > 0 || result.errors > 0) {
          return reject(
            new Error(`${o.method ?? 'GET'} ${o.url}: ${result.non2xx} non-2xx (${JSON.stringify(result.statusCodeStats)}), ${result.errors} errors`),
          );
        }
        resolve({
          requests: latenciesMs.length,
          reqPerS: latenciesMs.length / result.duration,
          p50Ms: percentile(latenciesMs, 50),
          p99Ms: percentile(latenciesMs, 99),
        });
      },
    );
    instance.on('response', (_client, statusCode, _bytes, responseTimeMs) => {
      if (statusCode >= 200 && statusCode < 300) latenciesMs.push(responseTimeMs);
    });
  });
}
