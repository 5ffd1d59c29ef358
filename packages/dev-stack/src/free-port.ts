import { createServer } from 'node:net';

/**
 * Asks the kernel for a free TCP port on 127.0.0.1. For servers that cannot
 * take port 0 themselves (redis-server treats 0 as "no TCP", postgres needs the
 * number up front); another process may still grab it before they bind, so
 * callers retry on "address in use".
 */
export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port ? resolve(port) : reject(new Error('could not read the port the kernel picked'))));
    });
  });
}
