import { dayBound, jobPartitionName, type Pool } from '@inferq/db';

const DAY_MS = 86_400_000;

export interface TombstoneDay {
  name: string;
  rows: number;
  /** The INSERT … SELECT into the plain table. */
  fillMs: number;
  /** ATTACH PARTITION: builds the partition's share of jobs' indexes. */
  attachMs: number;
  bytes: number;
}

/**
 * A day's partition of jobs holding `rows` purged jobs (tombstones: no tensors,
 * purged_at set) with UUIDv7 ids spread over the day, as the retention sweeper
 * leaves a day before the partition maintainer drops it. Filled as a plain
 * table and then attached (one index build per index, not `rows` index
 * inserts); a CHECK matching the bound spares ATTACH its validating scan.
 */
export async function attachTombstoneDay(pool: Pool, day: Date, rows: number): Promise<TombstoneDay> {
  const name = jobPartitionName(day);
  const from = dayBound(day);
  const to = dayBound(new Date(day.getTime() + DAY_MS));
  const client = await pool.connect();
  try {
    await client.query(`SET maintenance_work_mem = '256MB'`);
    await client.query(`CREATE TABLE ${name} (LIKE jobs INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE)`);
    let started = performance.now();
    await client.query(
      `INSERT INTO ${name} (id, owner_key_id, model_name, model_version, priority, status, inputs, batch_size, items,
                            created_at, started_at, finished_at, queue_ms, infer_ms, device_ms, purged_at, purge_reason)
       SELECT (substr(c.h, 1, 8) || '-' || substr(c.h, 9, 4) || substr(gen_random_uuid()::text, 14))::uuid,
              (SELECT id FROM api_keys LIMIT 1), 'mlp', 1, 'normal', 'succeeded', '[]', 32, 1,
              ct.t, ct.t + interval '3 ms', ct.t + interval '5 ms', 3, 1.5, 0.05, ct.t + interval '1 day', 'retention'
         FROM generate_series(0, $1::int - 1) AS g,
              LATERAL (SELECT $2::timestamptz + g * ($3::float8 * interval '1 ms') AS t) AS ct,
              LATERAL (SELECT lpad(to_hex((extract(epoch FROM ct.t) * 1000)::bigint), 12, '0') AS h) AS c`,
      [rows, day.toISOString(), (DAY_MS - 1) / rows],
    );
    const fillMs = Math.round(performance.now() - started);
    await client.query(`ALTER TABLE ${name} ADD CONSTRAINT ${name}_bound CHECK (id >= '${from}' AND id < '${to}')`);
    started = performance.now();
    await client.query(`ALTER TABLE jobs ATTACH PARTITION ${name} FOR VALUES FROM ('${from}') TO ('${to}')`);
    const attachMs = Math.round(performance.now() - started);
    await client.query(`ALTER TABLE ${name} DROP CONSTRAINT ${name}_bound`);
    await client.query(`VACUUM ANALYZE ${name}`);
    const { rows: size } = await client.query<{ bytes: string }>(`SELECT pg_total_relation_size('${name}') AS bytes`);
    return { name, rows, fillMs, attachMs, bytes: Number(size[0]!.bytes) };
  } finally {
    await client.query('RESET maintenance_work_mem').catch(() => {});
    client.release();
  }
}
