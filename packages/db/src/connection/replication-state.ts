import type { Pool } from './pool.ts';

/** What the primary says of its standbys: how many stream from it, and whether any is synchronous. */
export interface ReplicationState {
  replicas: number;
  synchronous: number;
  /** `synchronous_standby_names` as set (empty: every commit is acknowledged before any standby has it). */
  synchronousStandbyNames: string;
}

/**
 * The primary's replication as it stands. A role without pg_monitor sees the rows of pg_stat_replication but not their
 * sync_state, so `synchronous_standby_names` is read too: set, with replicas streaming, counts as synchronous.
 * Storage-level replication (RDS Multi-AZ, Aurora) shows no rows and needs no warning.
 */
export async function readReplicationState(pool: Pool): Promise<ReplicationState> {
  const { rows } = await pool.query<{ replicas: number; synchronous: number; hidden: number; names: string }>(
    `SELECT count(*)::int AS replicas,
            count(*) FILTER (WHERE sync_state IN ('sync', 'quorum'))::int AS synchronous,
            count(*) FILTER (WHERE sync_state IS NULL)::int AS hidden,
            current_setting('synchronous_standby_names') AS names
       FROM pg_stat_replication`,
  );
  const { replicas, synchronous, hidden, names } = rows[0]!;
  const assumed = hidden > 0 && names.trim() !== '' ? hidden : 0;
  return { replicas, synchronous: synchronous + assumed, synchronousStandbyNames: names };
}

/** The start-up warning for a primary whose failover may lose acknowledged commits, or undefined when it cannot. */
export function asyncReplicationWarning(state: ReplicationState): string | undefined {
  if (state.replicas === 0 || state.synchronous > 0) return undefined;
  return (
    `postgres primary has ${state.replicas} replica(s) but no synchronous standby: a failover to one may lose the jobs accepted in its last ` +
    'moments (they answer 410 JOB_LOST; docs/reliability.md, "Postgres failover"). Set synchronous replication to lose none'
  );
}
