import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance } from 'fastify';

const API_PATH = /^\/(v1|v2|docs|healthz|readyz)(\/|$|\?)/;
/** A request for a file (`/assets/app-1a2b.js`, `/favicon.ico`) that does not exist is a 404, never the page. */
const FILE_PATH = /\/[^/?]+\.[a-z0-9]+(\?|$)/i;

/**
 * Serves the built web console at `/` (same origin as the API, so no CORS).
 * Paths that are not files and not API routes get index.html, so client-side
 * routes survive a reload. The file list is read at start: a rebuilt console
 * needs an API restart. Does nothing when the console is not built.
 */
export async function registerConsole(app: FastifyInstance, dir: string): Promise<boolean> {
  const root = resolve(dir);
  if (!existsSync(resolve(root, 'index.html'))) return false;
  await app.register(fastifyStatic, {
    root,
    wildcard: false,
    cacheControl: false,
    setHeaders: (reply, path) => {
      // Vite fingerprints everything under assets/; index.html must always be revalidated.
      reply.header('cache-control', path.includes('/assets/') ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
  app.get('/*', { schema: { hide: true } }, (request, reply) => {
    if (API_PATH.test(request.url) || FILE_PATH.test(request.url)) return reply.callNotFound();
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  });
  return true;
}
