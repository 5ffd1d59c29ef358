import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { PostgresOutageOptions } from './postgres-outage.ts';

/**
 * The Postgres metrics an API or worker process serves, fed by watchPostgresOutages: whether the process's pool
 * reaches a primary that takes writes, its outages (count and length: a failover's is the time from the primary's
 * loss to the promoted one taking writes) and the failovers seen (a new timeline, or another server answering).
 * None is read at scrape time: a scrape during an outage serves them at once.
 */
export function createPostgresOutageMetrics(registry: Registry): Pick<PostgresOutageOptions, 'onChange' | 'onFailover'> {
  const registers = [registry];
  const up = new Gauge({
    name: 'inferq_postgres_up',
    help: "1 while the process's pool reaches a Postgres primary that takes writes, 0 during an outage or failover (probed every second)",
    registers,
  });
  up.set(1);
  const outages = new Counter({
    name: 'inferq_postgres_outages_total',
    help: 'Outages of the Postgres primary seen: no answer, or only a server in recovery or read-only (a failover counts one)',
    registers,
  });
  const outageSeconds = new Histogram({
    name: 'inferq_postgres_outage_seconds',
    help: 'From the primary lost to a primary taking writes again, per outage',
    buckets: [0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300],
    registers,
  });
  const failovers = new Counter({
    name: 'inferq_postgres_failovers_total',
    help: 'Times the writable primary changed: its timeline changed (a promotion starts a new one) or another server answered',
    registers,
  });
  return {
    onChange(isUp, outageMs) {
      up.set(isUp ? 1 : 0);
      if (!isUp) outages.inc();
      else if (outageMs !== undefined) outageSeconds.observe(outageMs / 1000);
    },
    onFailover: () => failovers.inc(),
  };
}
