import { join } from 'node:path';
import { createExecutableFinder } from './find-executable.ts';
import { startPostgresServer } from './postgres-server.ts';
import { startRedisServer } from './redis-server.ts';
import { startS3Server } from './s3-server.ts';
import { asServiceStartError } from './service-start-error.ts';

export interface ProvideServicesOptions {
  /**
   * The environment as given; a service starts only when its variable is missing or empty here.
   * INFERQ_SYSTEM_DIR, when set, is the default for relocationBase.
   */
  env: Record<string, string | undefined>;
  /** Parent of each service's data: `postgres/`, `redis/`, `s3/`. */
  dataDir: string;
  /** Called with one line per service started. */
  log: (line: string) => void;
  /** As root, where Postgres's binaries and cluster go when the `postgres` user cannot reach `dataDir`. @default /var/lib/inferq */
  relocationBase?: string;
}

export interface ProvidedServices {
  /** Variables to set for the started services; empty when everything was configured. */
  env: Record<string, string>;
  /** Stops every service started here. */
  stop(): Promise<void>;
}

interface StartedService {
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * Real Postgres, Redis and S3 for the demo and tests on a machine that has
 * none: configured URLs win, anything missing is started embedded.
 */
export async function provideServices(options: ProvideServicesOptions): Promise<ProvidedServices> {
  const { env, dataDir, log } = options;
  const starts: Array<Promise<StartedService>> = [];
  const started = (name: string, at: string, startedAtMs: number) =>
    log(`started embedded ${name} at ${at} in ${Math.round(performance.now() - startedAtMs)} ms`);

  if (!env.DATABASE_URL) {
    starts.push(
      (async () => {
        const t0 = performance.now();
        const server = await startPostgresServer({
          dataDir: join(dataDir, 'postgres'),
          relocationBase: options.relocationBase ?? (env.INFERQ_SYSTEM_DIR || undefined),
          log,
        });
        started('Postgres', withoutPassword(server.url), t0);
        return { env: { DATABASE_URL: server.url }, stop: server.stop };
      })(),
    );
  }
  if (!env.REDIS_URL) {
    starts.push(
      (async () => {
        const t0 = performance.now();
        const server = await startRedisServer({ dataDir: join(dataDir, 'redis'), log, findExecutable: createExecutableFinder(env.PATH) }).catch(
          (err: unknown) => {
            throw asServiceStartError('Redis', err, 'set REDIS_URL to an existing Redis 6.2+ server (e.g. REDIS_URL=redis://127.0.0.1:6379)');
          },
        );
        started('Redis', server.url, t0);
        return { env: { REDIS_URL: server.url }, stop: server.stop };
      })(),
    );
  }
  if (!env.S3_ENDPOINT) {
    starts.push(
      (async () => {
        const t0 = performance.now();
        const server = await startS3Server({ dir: join(dataDir, 's3') }).catch((err: unknown) => {
          throw asServiceStartError('S3', err, 'set S3_ENDPOINT (and S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY) to an existing S3-compatible server');
        });
        started('S3 (s3rver)', server.endpoint, t0);
        return {
          env: {
            S3_ENDPOINT: server.endpoint,
            S3_ACCESS_KEY_ID: server.accessKeyId,
            S3_SECRET_ACCESS_KEY: server.secretAccessKey,
            S3_REGION: server.region,
            S3_FORCE_PATH_STYLE: 'true',
          },
          stop: server.stop,
        };
      })(),
    );
  }

  const results = await Promise.allSettled(starts);
  const services = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
  const errors = results.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []));
  if (errors.length > 0) {
    // Leave nothing running behind a failed start.
    await Promise.allSettled(services.map((s) => s.stop()));
    if (errors.length === 1) throw errors[0];
    throw new AggregateError(errors, errors.map((e) => (e as Error).message).join('\n'));
  }

  let stopping: Promise<void> | undefined;
  return {
    env: Object.assign({}, ...services.map((s) => s.env)) as Record<string, string>,
    stop() {
      stopping ??= Promise.all(services.map((s) => s.stop())).then(() => undefined);
      return stopping;
    },
  };
}

function withoutPassword(url: string): string {
  const parsed = new URL(url);
  parsed.password = '';
  return parsed.toString();
}
