import { mkdir } from 'node:fs/promises';
import S3rver from 's3rver';

export interface S3ServerOptions {
  /** Buckets and objects live here as plain files, kept across restarts. */
  dir: string;
  /** @default a free port, picked by the kernel */
  port?: number;
  /** The address to listen on. @default 127.0.0.1 */
  address?: string;
}

export interface RunningS3Server {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
  stop(): Promise<void>;
}

// s3rver's built-in account (lib/models/account.js); it verifies signatures against it.
const ACCESS_KEY_ID = 'S3RVER';
const SECRET_ACCESS_KEY = 'S3RVER';

export async function startS3Server(options: S3ServerOptions): Promise<RunningS3Server> {
  await mkdir(options.dir, { recursive: true });
  const address = options.address ?? '127.0.0.1';
  const server = new S3rver({ address, port: options.port ?? 0, directory: options.dir, silent: true });
  const { port } = await server.run();
  return {
    endpoint: `http://${address}:${port}`,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    region: 'us-east-1',
    async stop() {
      // Clients keep sockets alive; without this close() waits for them to time out.
      server.httpServer?.closeAllConnections();
      await server.close();
    },
  };
}
