import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { mkdir, mkdtemp, open, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@inferq/core';
import { createExecutableFinder, NGINX, resolveDebianBinary } from '@inferq/dev-stack';
import { apiConfig } from '../../apps/api/src/config.ts';
import { findFreePort } from '../../packages/dev-stack/src/free-port.ts';
import { readComposeFile, repoRoot, serviceEnv } from './compose-file.ts';

// infrastructure/nginx/nginx.conf loads in Debian's nginx and, in front of a
// stand-in API, does what the compose stack relies on: TLS with the dev
// certificate, proxying with the forwarding headers, keep-alive upstream
// connections, the redirect to HTTPS, body limits, SSE without buffering, and
// the per-IP rate limit.

const run = promisify(execFile);
const nginxDir = resolve(repoRoot, 'infrastructure/nginx');
const MiB = 1024 * 1024;

interface Ports {
  http: number;
  https: number;
  api: number;
}

/**
 * The config as the container has it, with only what differs on this machine
 * rewritten. Each rewrite must match exactly as often as listed, so the test
 * fails rather than silently checking a different config.
 */
function renderConfig(conf: string, dir: string, ports: Ports, nginxVersion: number[]): string {
  const atLeast = (...v: number[]) => {
    const i = v.findIndex((n, k) => n !== nginxVersion[k]);
    return i === -1 || nginxVersion[i]! > v[i]!;
  };
  const rewrites: Array<{ from: string; to: string; count: number }> = [
    // Debian's worker user; the image's is `nginx`.
    { from: 'user nginx;', to: 'user www-data;', count: 1 },
    // The compose DNS name becomes the stand-in API; `resolve` (nginx >= 1.27.3) needs a name to resolve.
    { from: 'server api:8080 resolve;', to: `server 127.0.0.1:${ports.api};`, count: 1 },
    { from: 'listen 80 default_server;', to: `listen 127.0.0.1:${ports.http} default_server;`, count: 1 },
    { from: 'listen 443 ssl default_server;', to: `listen 127.0.0.1:${ports.https} ssl default_server;`, count: 1 },
    { from: '/etc/nginx/certs/', to: `${dir}/certs/`, count: 2 },
    { from: '/etc/nginx/conf.d/', to: `${dir}/conf.d/`, count: 1 },
    // `http2 on;` is nginx 1.25.1+; Debian 12 ships 1.22.
    ...(atLeast(1, 25, 1) ? [] : [{ from: 'http2 on;', to: '', count: 1 }]),
  ];
  let out = conf;
  for (const { from, to, count } of rewrites) {
    expect(out.split(from).length - 1, `occurrences of "${from}" in nginx.conf`).toBe(count);
    out = out.replaceAll(from, to);
  }
  return out;
}

/** What the stand-in API saw. */
interface Seen {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
}

function startStandInApi(): { server: Server; seen: Seen[]; connections: () => number } {
  const seen: Seen[] = [];
  let connections = 0;
  const server = createServer((req, res) => {
    if (req.url?.match(/^\/v1\/jobs\/[^/]+\/events$/)) {
      // One event, then silence: only an unbuffered proxy passes it on before the stream ends.
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write('event: status\ndata: {"status":"running"}\n\n');
      req.socket.setTimeout(10_000, () => res.end());
      return;
    }
    let bodyBytes = 0;
    req.on('data', (chunk: Buffer) => {
      bodyBytes += chunk.length;
    });
    req.on('end', () => {
      seen.push({ method: req.method!, url: req.url!, headers: req.headers, bodyBytes });
      const body = JSON.stringify({ ok: true, bodyBytes, padding: req.url === '/v1/big' ? 'x'.repeat(4_096) : '' });
      res.writeHead(200, { 'content-type': 'application/json' }).end(body);
    });
  });
  server.on('connection', () => {
    connections++;
  });
  return { server, seen, connections: () => connections };
}

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

function send(options: {
  url: string;
  method?: string;
  headers?: Record<string, string | number>;
  body?: Buffer;
  ca?: Buffer;
  agent?: Agent;
  stopAfterHeaders?: boolean;
}): Promise<Reply> {
  const url = new URL(options.url);
  const make = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = make(url, { method: options.method ?? 'GET', headers: options.headers, ca: options.ca, agent: options.agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (options.stopAfterHeaders) req.flushHeaders();
    else req.end(options.body);
  });
}

async function waitFor<T>(what: () => string, probe: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await delay(50);
  }
}

describe('nginx config', () => {
  let nginx: string;
  let dir: string;
  let ca: Buffer;
  let ports: Ports;
  let conf: string;
  const api = startStandInApi();
  // nginx opens /dev/stdout for the access log, which fails on the socket pairs
  // Node gives a child for stdio: it gets a file instead, as a container's
  // stdout would be a pipe.
  const nginxArgs = () => ['-c', conf, '-p', `${dir}/`, '-e', 'stderr'];
  const stdoutFile = () => join(dir, 'stdout.log');

  beforeAll(async () => {
    const findExecutable = createExecutableFinder(process.env.PATH);
    nginx = await resolveDebianBinary(NGINX, { findExecutable, log: (line) => console.log(line) });
    const { stderr } = await run(nginx, ['-v']);
    const version = (/nginx\/(\d+)\.(\d+)\.(\d+)/.exec(stderr) ?? []).slice(1).map(Number);
    expect(version).toHaveLength(3);
    dir = await mkdtemp(join(tmpdir(), 'inferq-nginx-'));
    await mkdir(join(dir, 'conf.d'));
    await run('sh', [join(nginxDir, 'generate-dev-cert.sh'), join(dir, 'certs')]);
    ca = await readFile(join(dir, 'certs/dev.crt'));

    api.server.listen(0, '127.0.0.1');
    await once(api.server, 'listening');
    ports = { http: await findFreePort(), https: await findFreePort(), api: (api.server.address() as { port: number }).port };
    const template = await readFile(join(nginxDir, 'templates/https-port.conf.template'), 'utf8');
    expect(template).toContain('${INFERQ_HTTPS_PORT}');
    await writeFile(join(dir, 'conf.d/https-port.conf'), template.replaceAll('${INFERQ_HTTPS_PORT}', String(ports.https)));
    conf = join(dir, 'nginx.conf');
    await writeFile(conf, renderConfig(await readFile(join(nginxDir, 'nginx.conf'), 'utf8'), dir, ports, version));
  }, 300_000); // installing nginx with apt the first time

  afterAll(async () => {
    api.server.closeAllConnections();
    api.server.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('passes nginx -t', async () => {
    const stdout = await open(stdoutFile(), 'a');
    const test = spawn(nginx, [...nginxArgs(), '-t', '-g', `pid ${dir}/test.pid;`], { stdio: ['ignore', stdout.fd, 'pipe'] });
    await stdout.close();
    let output = '';
    test.stderr!.on('data', (c: Buffer) => {
      output += c.toString();
    });
    const [code] = (await once(test, 'exit')) as [number];
    expect(output).toContain('test is successful');
    expect(code).toBe(0);
  });

  it('generates a dev certificate for localhost and 127.0.0.1 once, and keeps it', async () => {
    const cert = new X509Certificate(ca);
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1');
    expect(cert.ca).toBe(false);
    const days = (Date.parse(cert.validTo) - Date.parse(cert.validFrom)) / 86_400_000;
    expect(days).toBe(825);
    const key = createPrivateKey(await readFile(join(dir, 'certs/dev.key')));
    expect(cert.checkPrivateKey(key)).toBe(true);
    expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    expect((await stat(join(dir, 'certs/dev.key'))).mode & 0o077).toBe(0);

    const { stdout } = await run('sh', [join(nginxDir, 'generate-dev-cert.sh'), join(dir, 'certs')]);
    expect(stdout).toMatch(/keeping it/);
    expect(await readFile(join(dir, 'certs/dev.crt'))).toEqual(ca);
  });

  it('sets the same body limits as the API it fronts', async () => {
    const conf = await readFile(join(nginxDir, 'nginx.conf'), 'utf8');
    const api = loadConfig(apiConfig, serviceEnv(readComposeFile().compose.services.api!));
    const bytes = (size: string) => Number.parseInt(size, 10) * { k: 1024, m: MiB, g: 1024 * MiB }[size.at(-1)!.toLowerCase() as 'k' | 'm' | 'g'];
    const limits = [...conf.matchAll(/client_max_body_size (\w+);/g)].map(([, size]) => bytes(size!));
    expect(limits).toEqual([api.BODY_LIMIT_BYTES, api.MODEL_UPLOAD_LIMIT_BYTES]);
    expect(conf).toMatch(/location = \/v1\/models \{[^}]*client_max_body_size 1g;[^}]*proxy_request_buffering off;/);
  });

  describe('running in front of a stand-in API', () => {
    let child: ChildProcess;
    let errors = '';
    const accessLog = async () => (await readFile(stdoutFile(), 'utf8')).split('\n').filter(Boolean);
    const agent = new Agent({ keepAlive: true, maxSockets: 32 });
    const https = (path: string) => `https://127.0.0.1:${ports.https}${path}`;

    beforeAll(async () => {
      const stdout = await open(stdoutFile(), 'a');
      // setpriv: the kernel stops nginx if this test process dies without cleaning up.
      const setpriv = createExecutableFinder(process.env.PATH)('setpriv');
      const command = [nginx, ...nginxArgs(), '-g', `daemon off; pid ${dir}/nginx.pid;`];
      const options = { stdio: ['ignore', stdout.fd, 'pipe'] as ['ignore', number, 'pipe'] };
      child = setpriv ? spawn(setpriv, ['--pdeathsig', 'TERM', '--', ...command], options) : spawn(command[0]!, command.slice(1), options);
      await stdout.close();
      child.stderr!.on('data', (c: Buffer) => {
        errors += c.toString();
      });
      await waitFor(
        () => `nginx on :${ports.https}\n${errors}`,
        async () => (await send({ url: https('/healthz'), ca })).status === 200 || undefined,
      );
    }, 30_000);

    afterAll(async () => {
      agent.destroy();
      if (child && child.exitCode === null) {
        child.kill('SIGQUIT');
        await once(child, 'exit');
      }
    });

    it('proxies over TLS with the forwarding headers and a request id, logging each request as JSON', async () => {
      const reply = await send({ url: https('/v1/me'), ca, headers: { 'x-forwarded-for': '6.6.6.6', 'x-request-id': 'req-from-client' } });
      expect(reply.status).toBe(200);
      expect(reply.headers['x-request-id']).toBe('req-from-client');
      const seen = api.seen.find((s) => s.url === '/v1/me')!;
      // A client's own X-Forwarded-For is not trusted at the edge.
      expect(seen.headers).toMatchObject({
        'x-forwarded-for': '127.0.0.1',
        'x-real-ip': '127.0.0.1',
        'x-forwarded-proto': 'https',
        'x-request-id': 'req-from-client',
        host: '127.0.0.1',
      });
      expect(seen.headers.connection).toBeUndefined(); // HTTP/1.1 keep-alive to the upstream

      // None, or one that is not plain (it is echoed into JSON): nginx makes one.
      for (const headers of [{}, { 'x-request-id': 'a"b' }] as Array<Record<string, string>>) {
        const generated = await send({ url: https('/v1/jobs'), ca, headers });
        expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f]{32}$/);
        expect(api.seen.at(-1)!.headers['x-request-id']).toBe(generated.headers['x-request-id']);
      }

      const line = await waitFor(
        () => 'the access log line',
        async () => (await accessLog()).find((l) => l.includes('"request_id":"req-from-client"')),
      );
      expect(JSON.parse(line)).toMatchObject({ method: 'GET', uri: '/v1/me', status: 200, upstream_addr: `127.0.0.1:${ports.api}`, remote_addr: '127.0.0.1' });
    });

    it('reuses upstream connections instead of opening one per request', async () => {
      await send({ url: https('/v1/me'), ca, agent });
      const before = api.connections();
      for (let i = 0; i < 20; i++) expect((await send({ url: https('/v1/me'), ca, agent })).status).toBe(200);
      expect(api.connections() - before).toBeLessThanOrEqual(1);
    });

    it('redirects plain HTTP to HTTPS on the published port, except the health probe', async () => {
      const redirect = await send({ url: `http://127.0.0.1:${ports.http}/v1/jobs?limit=5` });
      expect(redirect.status).toBe(301);
      expect(redirect.headers.location).toBe(`https://127.0.0.1:${ports.https}/v1/jobs?limit=5`);
      const health = await send({ url: `http://127.0.0.1:${ports.http}/healthz` });
      expect(health.status).toBe(200);
      expect(api.seen.at(-1)).toMatchObject({ url: '/healthz', headers: { 'x-forwarded-proto': 'http' } });
    });

    it('keeps /metrics off the public side', async () => {
      const reply = await send({ url: https('/metrics'), ca });
      expect(reply.status).toBe(404);
      expect(JSON.parse(reply.body.toString())).toMatchObject({ status: 404, code: 'NOT_FOUND' });
      expect(api.seen.some((s) => s.url === '/metrics')).toBe(false);
    });

    it('refuses a body over 32 MiB with a problem+json 413 before it reaches the API', async () => {
      const reply = await send({
        url: https('/v1/jobs'),
        ca,
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': 33 * MiB },
        stopAfterHeaders: true,
      });
      expect(reply.status).toBe(413);
      expect(reply.headers['content-type']).toBe('application/problem+json');
      expect(JSON.parse(reply.body.toString())).toMatchObject({ status: 413, code: 'PAYLOAD_TOO_LARGE' });
      expect(api.seen.some((s) => s.method === 'POST' && s.url === '/v1/jobs')).toBe(false);
    });

    it('lets a model upload past 32 MiB through to the API', async () => {
      const body = Buffer.alloc(40 * MiB, 1);
      const reply = await send({ url: https('/v1/models'), ca, method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body });
      expect(reply.status).toBe(200);
      expect(api.seen.find((s) => s.method === 'POST' && s.url === '/v1/models')?.bodyBytes).toBe(body.length);
    });

    it('compresses JSON for clients that accept gzip', async () => {
      const reply = await send({ url: https('/v1/big'), ca, headers: { 'accept-encoding': 'gzip' } });
      expect(reply.headers['content-encoding']).toBe('gzip');
      expect(JSON.parse(gunzipSync(reply.body).toString())).toMatchObject({ ok: true });
    });

    it('passes server-sent events on as they are written', async () => {
      const url = new URL(https('/v1/jobs/abc/events'));
      const first = await new Promise<string>((resolve, reject) => {
        const req = httpsRequest(url, { ca }, (res) => {
          res.once('data', (chunk: Buffer) => {
            resolve(chunk.toString());
            req.destroy();
          });
        });
        req.on('error', reject);
        req.setTimeout(5_000, () => reject(new Error('no event within 5 s: the proxy is buffering the stream')));
        req.end();
      });
      expect(first).toContain('data: {"status":"running"}');
    });

    it('answers a burst past the per-IP limit with problem+json 429s', async () => {
      // Waves of 400 at once: a slow machine refills the bucket between requests, so keep going until the limit shows.
      const replies: Reply[] = [];
      for (let wave = 0; wave < 10 && !replies.some((r) => r.status === 429); wave++) {
        replies.push(...(await Promise.all(Array.from({ length: 400 }, () => send({ url: https('/v1/me'), ca, agent })))));
      }
      const limited = replies.filter((r) => r.status === 429);
      expect(limited.length).toBeGreaterThan(0);
      expect(replies.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(300); // the burst itself is served
      expect(limited[0]!.headers['content-type']).toBe('application/problem+json');
      expect(limited[0]!.headers['retry-after']).toBe('1');
      expect(JSON.parse(limited[0]!.body.toString())).toMatchObject({ status: 429, code: 'RATE_LIMITED' });
    });
  });
});
