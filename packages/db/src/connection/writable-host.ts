import pg from 'pg';
import type { PostgresHost, PostgresTargets } from './postgres-url.ts';

/**
 * What libpq does with several hosts and `target_session_attrs`, and
 * node-postgres does not (brianc/node-postgres#1470): every new connection of
 * a pool goes to the host that takes writes, found by asking each host
 * whether its sessions are read-only, the way libpq asks (all at once here,
 * where libpq asks in turn). The host found is remembered until a connection to it fails, it
 * answers read-only (demoted), or a connection to it is lost; the next
 * connection then looks again. A promoted standby is found without
 * restarting anything.
 */
export interface HostLocator {
  /** The host new connections go to, found now when none is known. Rejects, as a connection error, when no host qualifies. */
  target(): Promise<PostgresHost>;
  /** This host failed a connection or stopped taking writes: look again before the next connection. */
  forget(host: PostgresHost): void;
}

/** Thrown when no host qualifies; its code is libpq's "unable to establish connection", so callers answer 503. */
class NoWritableHostError extends Error {
  override name = 'NoWritableHostError';
  readonly code = '08001';
}

export interface HostLocatorOptions {
  targets: PostgresTargets;
  /** The connection settings each probe uses besides its host (user, password, TLS). */
  clientConfig: pg.ClientConfig;
  /** Per host and probe, connect and answer (a vanished host must not hold up the others). */
  probeTimeoutMs: number;
  /** Told whenever the host connections go to changes (a failover, as the pool sees it). */
  onTargetChange?(host: PostgresHost, previous: PostgresHost | undefined): void;
}

/** Whether a connected session may write: libpq's read-write check. */
async function takesWrites(client: pg.ClientBase): Promise<boolean> {
  const { rows } = await client.query<{ transaction_read_only: string }>('SHOW transaction_read_only');
  return rows[0]?.transaction_read_only === 'off';
}

/** For `any`: the first host in order that answered, once every host before it has answered (and refused). */
function firstAnswered(hosts: readonly PostgresHost[], answers: ReadonlyMap<PostgresHost, string | undefined>): PostgresHost | undefined {
  for (const host of hosts) {
    if (!answers.has(host)) return undefined;
    if (answers.get(host) === undefined) return host;
  }
  return undefined;
}

export function createHostLocator(options: HostLocatorOptions): HostLocator {
  const { targets } = options;
  const needsWrites = targets.targetSessionAttrs !== 'any';
  let current: PostgresHost | undefined;
  let last: PostgresHost | undefined;
  let looking: Promise<PostgresHost> | undefined;

  const probe = async (host: PostgresHost): Promise<string | undefined> => {
    const client = new pg.Client({ ...options.clientConfig, connectionString: host.url, connectionTimeoutMillis: options.probeTimeoutMs });
    client.on('error', () => {});
    const timer = setTimeout(() => void client.end().catch(() => {}), options.probeTimeoutMs);
    try {
      await client.connect();
      if (needsWrites && !(await takesWrites(client))) return 'read-only';
      return undefined;
    } catch (err) {
      return (err as Error).message;
    } finally {
      clearTimeout(timer);
      // Why nothing is lost: a probe's session holds nothing; its end only closes the socket.
      void client.end().catch(() => {});
    }
  };

  /**
   * All hosts at once. For read-write the first that qualifies wins (there is one primary); for `any`, the first in
   * the order given that answers, as libpq takes it. The look fails once every host has refused. Asked in turn, as
   * libpq asks, a host that vanished (connects that hang) would cost its whole timeout before the next is asked.
   */
  const look = (): Promise<PostgresHost> =>
    new Promise((resolve, reject) => {
      const answers = new Map<PostgresHost, string | undefined>();
      let settled = false;
      const decide = () => {
        if (settled) return;
        const host = needsWrites ? targets.hosts.find((h) => answers.has(h) && answers.get(h) === undefined) : firstAnswered(targets.hosts, answers);
        if (host) {
          settled = true;
          if (host !== last) options.onTargetChange?.(host, last);
          last = current = host;
          return resolve(host);
        }
        if (answers.size < targets.hosts.length) return;
        settled = true;
        const list = targets.hosts.map((h) => `${h.host}:${h.port} (${answers.get(h)})`).join(', ');
        reject(new NoWritableHostError(`no Postgres host ${needsWrites ? 'takes writes' : 'answers'}: ${list}`));
      };
      for (const host of targets.hosts) {
        // Why nothing is lost: a probe never rejects; it resolves with why the host does not qualify.
        void probe(host).then((why) => {
          answers.set(host, why);
          decide();
        });
      }
    });

  return {
    target() {
      if (current) return Promise.resolve(current);
      looking ??= look().finally(() => (looking = undefined));
      return looking;
    },
    forget(host) {
      if (current === host) current = undefined;
    },
  };
}

/**
 * A pg Client class for a pool that connects where the locator says, checks
 * the session takes writes when that is asked for (the host may have been
 * demoted since it was found), and tells the locator of a lost connection.
 */
export function locatedClientClass(locator: HostLocator, needsWrites: boolean): typeof pg.Client & { failed(client: pg.PoolClient, err: Error): void } {
  return class LocatedClient extends pg.Client {
    /** Where this client connected. */
    private target: PostgresHost | undefined;

    /**
     * A statement of `client` failed as the pool saw it (its 'release' event): one that timed out or lost its
     * connection sends the next connection looking, as a lost connection does (a host that vanished resets nothing).
     */
    static failed(client: pg.PoolClient, err: Error): void {
      if (client instanceof LocatedClient && client.target && /Query read timeout|Connection terminated/.test(err.message)) locator.forget(client.target);
    }

    override connect(): Promise<pg.Client>;
    override connect(callback: (err: Error | null, client?: pg.Client) => void): void;
    override connect(callback?: (err: Error | null, client?: pg.Client) => void): Promise<pg.Client> | void {
      const connecting = this.connectToTarget();
      if (!callback) return connecting;
      connecting.then(
        (client) => callback(null, client),
        (err: Error) => callback(err),
      );
    }

    private async connectToTarget(): Promise<pg.Client> {
      const host = await locator.target();
      this.target = host;
      this.host = host.host;
      this.port = host.port;
      // A connection lost later (the primary killed, demoted or cut off) sends the next one looking. The pool's own
      // listeners report the error to whoever holds the client; this one also keeps an unheld client's error from
      // crashing the process.
      this.on('error', () => locator.forget(host));
      try {
        await super.connect();
        if (needsWrites && !(await takesWrites(this))) {
          const err = Object.assign(new Error(`Postgres host ${host.host}:${host.port} no longer takes writes (a standby now)`), { code: '25006' });
          throw err;
        }
        return this;
      } catch (err) {
        locator.forget(host);
        // Why nothing is lost: the session never ran a statement of the caller's.
        void this.end().catch(() => {});
        throw err;
      }
    }
  };
}
