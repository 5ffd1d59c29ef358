import type { QueryConfig } from 'pg';
import { isDatabaseUnavailable, type Pool } from './pool.ts';

export interface PostgresOutageLogger {
  warn(fields: object, message: string): void;
  info(fields: object, message: string): void;
  debug(fields: object, message: string): void;
}

/** The Postgres server a probe reached while it took writes: a failover changes the timeline, or the server. */
export interface PostgresPrimary {
  /** The timeline it writes WAL on; a promotion starts a new one. Undefined where the server does not say. */
  timeline: number | undefined;
  /** `address:port` as the server sees the connection (`local` over a Unix socket). */
  server: string;
}

export interface PostgresOutageOptions {
  logger: PostgresOutageLogger;
  /** From the end of one probe to the start of the next (1 s by default). */
  intervalMs?: number;
  /** How long a probe may take, connecting included, before it counts as no answer (1 s by default). */
  probeTimeoutMs?: number;
  /** Told when an outage starts (`up` false) and when it ends (`up` true, with its length). */
  onChange?(up: boolean, outageMs?: number): void;
  /** Told when the writable primary is not the one before: its timeline changed or another server answers. */
  onFailover?(primary: PostgresPrimary, previous: PostgresPrimary): void;
  now?: () => number;
}

export interface PostgresOutageWatch {
  /** Since when no writable primary has answered (ms since the epoch); undefined while one does. */
  readonly downSince: number | undefined;
  /** The primary the last probe that found one reached. */
  readonly primary: PostgresPrimary | undefined;
  /** Probes every interval until stop(); the first at once. */
  start(): void;
  /** Tells the watch of a failed statement: one that says the database is unreachable or read-only sends a probe at once. */
  queryFailed(err: unknown): void;
  /** One probe now (the timer's; tests call it). */
  probe(): Promise<void>;
  /** Stops probing and waits for a probe in flight. */
  stop(): Promise<void>;
}

/**
 * Whether the server takes writes (not in recovery, sessions not read-only), which server answered, and its timeline:
 * that of the WAL segment it writes now (a promotion's new timeline shows at once), else its last checkpoint's.
 */
const PROBE_SQL = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only,
  coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port()::text, current_setting('port')) AS server,
  CASE WHEN pg_is_in_recovery() THEN NULL ELSE pg_walfile_name(pg_current_wal_lsn()) END AS wal_file,
  (SELECT timeline_id FROM pg_control_checkpoint()) AS checkpoint_timeline`;
/** Where the server refuses what PROBE_SQL reads of the timeline (a managed service): failovers are told by the server alone. */
const PLAIN_PROBE_SQL = `SELECT pg_is_in_recovery() AS in_recovery, current_setting('transaction_read_only') AS read_only,
  coalesce(host(inet_server_addr()), 'local') || ':' || coalesce(inet_server_port()::text, current_setting('port')) AS server`;

interface ProbeRow {
  in_recovery: boolean;
  read_only: string;
  server: string;
  wal_file?: string | null;
  checkpoint_timeline?: number | null;
}

/** The timeline in a WAL segment's name: its first eight hex digits. */
export const walFileTimeline = (walFile: string): number | undefined => {
  const timeline = Number.parseInt(walFile.slice(0, 8), 16);
  return Number.isFinite(timeline) && timeline > 0 ? timeline : undefined;
};

class ProbeTimeout extends Error {}

/**
 * Probes in a row that must fail (no answer, an error) before an outage is declared; the one after a failure runs at
 * once. A single failure is often no outage: a pooled connection a restart left stale, a moment's wait for a pool
 * slot while every task reconnects. A server that answers it is in recovery or read-only is believed at once.
 */
const FAILED_PROBES = 2;

/**
 * Follows the process's pool to the Postgres primary and says so once each way, as watchRedisOutages does for Redis:
 * a probe through the pool every interval, each with its own time limit, asks whether the server answering takes
 * writes. A server in recovery or read-only starts an outage, and so do FAILED_PROBES probes in a row that get no
 * answer or an error: one warning; the first probe that finds a writable primary again ends it: one info line with its
 * length. A probe that finds a primary on another timeline, or another server, than the last one found counts a
 * failover (a promotion starts a new timeline). A failed statement the process tells it of (queryFailed), or a
 * connection the pool loses while idle, sends a probe at once. One statement at a time: a probe after one that timed out
 * waits for that statement again rather than send another.
 */
export function watchPostgresOutages(pool: Pool, o: PostgresOutageOptions): PostgresOutageWatch {
  const now = o.now ?? Date.now;
  const intervalMs = o.intervalMs ?? 1_000;
  const probeTimeoutMs = o.probeTimeoutMs ?? 1_000;
  let downSince: number | undefined;
  let primary: PostgresPrimary | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = true;
  let inFlight: Promise<void> | undefined;
  /** The pool's statement still running after its probe timed out: no other starts until it ends. */
  let held: Promise<{ rows: ProbeRow[] }> | undefined;
  let plain = false;
  /** Probes in a row that failed; the next one runs at once while it is under FAILED_PROBES. */
  let failed = 0;

  const lost = (meaning: string, fields: object) => {
    if (downSince !== undefined) return o.logger.debug(fields, `postgres still has no writable primary (${meaning})`);
    downSince = now();
    o.logger.warn(fields, `postgres primary lost (${meaning}): submits answer 503 DATABASE_UNAVAILABLE until a primary takes writes again`);
    o.onChange?.(false);
  };
  const found = (next: PostgresPrimary) => {
    const previous = primary;
    primary = next;
    const failover =
      previous !== undefined &&
      (previous.server !== next.server || (previous.timeline !== undefined && next.timeline !== undefined && previous.timeline !== next.timeline));
    const change = failover ? `, now ${next.server} on timeline ${next.timeline ?? '?'} (was ${previous.server} on ${previous.timeline ?? '?'})` : '';
    if (downSince !== undefined) {
      const outageMs = now() - downSince;
      downSince = undefined;
      o.logger.info(
        { outageMs, server: next.server, timeline: next.timeline, failover },
        `postgres accepting writes again after ${(outageMs / 1000).toFixed(1)} s${change}`,
      );
      o.onChange?.(true, outageMs);
    } else if (failover) {
      o.logger.info({ server: next.server, timeline: next.timeline, failover }, `postgres primary changed without an outage seen${change}`);
    }
    if (failover) o.onFailover?.(next, previous);
  };

  /** A failed probe: an outage once FAILED_PROBES have failed in a row. */
  const probeFailed = (meaning: string, fields: object) => {
    if (++failed >= FAILED_PROBES) return lost(meaning, { ...fields, probes: failed });
    o.logger.debug({ ...fields, probes: failed }, `postgres probe failed (${meaning}): probing again at once`);
  };

  const runProbe = async (): Promise<void> => {
    // query_timeout (node-postgres reads it per statement): a statement that outlives the probe gives its connection up.
    const statement = held ?? pool.query<ProbeRow>({ text: plain ? PLAIN_PROBE_SQL : PROBE_SQL, query_timeout: probeTimeoutMs } as QueryConfig);
    if (!held) {
      held = statement;
      void statement.then(
        () => (held = held === statement ? undefined : held),
        () => (held = held === statement ? undefined : held),
      );
    }
    let limit: NodeJS.Timeout | undefined;
    try {
      const { rows } = await Promise.race([
        statement,
        new Promise<never>((_, reject) => {
          limit = setTimeout(() => reject(new ProbeTimeout()), probeTimeoutMs);
          limit.unref();
        }),
      ]);
      const row = rows[0];
      if (!row) throw new Error('the probe returned no row');
      failed = 0;
      if (row.in_recovery || row.read_only !== 'off') {
        return lost(row.in_recovery ? 'the server answering is in recovery: a standby takes no writes' : 'the server answering is read-only', {
          server: row.server,
        });
      }
      const timeline = (row.wal_file ? walFileTimeline(row.wal_file) : undefined) ?? row.checkpoint_timeline ?? undefined;
      found({ timeline, server: row.server });
    } catch (err) {
      if (err instanceof ProbeTimeout) return probeFailed(`no answer within ${probeTimeoutMs} ms`, { timeoutMs: probeTimeoutMs });
      const e = err as Error & { code?: string };
      if (!plain && !isDatabaseUnavailable(e) && typeof e.code === 'string' && /^42/.test(e.code)) {
        // Refused (a privilege, a function a managed service leaves out): read what every role may, from now on.
        plain = true;
        held = undefined;
        o.logger.warn({ err: e.message }, 'postgres probe cannot read the timeline: failovers are told by the server answering alone');
        return runProbe();
      }
      probeFailed(isDatabaseUnavailable(e) ? 'the server does not answer' : 'the probe failed', { err: e.message, code: e.code });
    } finally {
      clearTimeout(limit);
    }
  };

  const probe = (): Promise<void> => {
    inFlight ??= runProbe().finally(() => (inFlight = undefined));
    return inFlight;
  };
  const schedule = (delayMs: number) => {
    timer = setTimeout(() => {
      void probe().then(() => {
        if (!stopped) schedule(failed > 0 && failed < FAILED_PROBES ? 0 : intervalMs);
      });
    }, delayMs);
    timer.unref();
  };
  const onIdleError = (err: Error) => watch.queryFailed(err);

  const watch: PostgresOutageWatch = {
    get downSince() {
      return downSince;
    },
    get primary() {
      return primary;
    },
    start() {
      if (!stopped) return;
      stopped = false;
      pool.on('error', onIdleError);
      schedule(0);
    },
    queryFailed(err) {
      if (stopped || downSince !== undefined || !isDatabaseUnavailable(err)) return;
      o.logger.debug({ err: (err as Error).message, code: (err as { code?: string }).code }, 'postgres statement failed: probing at once');
      // A probe in flight answers soon and schedules the next itself.
      if (inFlight) return;
      clearTimeout(timer);
      schedule(0);
    },
    probe,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      pool.off('error', onIdleError);
      await inFlight;
    },
  };
  return watch;
}
