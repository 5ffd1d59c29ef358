import { randomBytes } from 'node:crypto';
import { deleteRedisKeys, startProcess } from '@inferq/test-utils';

export interface BareFastify {
  /** The bare `POST /v1/jobs`. */
  submitUrl: string;
  /** The route's process. */
  pid: number;
  /** Stops the process and removes its queue keys. */
  close(): Promise<void>;
}

/** Starts the bare submit route (bare-fastify-server.ts) as a process on a free port, adding to its own queue prefix; `nodeArgs` e.g. `--cpu-prof`. */
export async function startBareFastify(redisUrl: string, nodeArgs: string[] = []): Promise<BareFastify> {
  const prefix = `{bench-bare-${randomBytes(4).toString('hex')}}`;
  const server = startProcess('apps/bench/src/ceilings/bare-fastify-server.ts', {}, nodeArgs, [redisUrl, prefix]);
  try {
    await server.waitForOutput(/listening on \d+/);
  } catch (err) {
    await server.stop();
    throw err;
  }
  const port = /listening on (\d+)/.exec(server.output())![1];
  return {
    submitUrl: `http://127.0.0.1:${port}/v1/jobs`,
    pid: server.child.pid!,
    async close() {
      await server.stop();
      await deleteRedisKeys(redisUrl, prefix);
    },
  };
}
