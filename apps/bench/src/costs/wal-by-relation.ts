import type { Pool } from '@inferq/db';

/**
 * Where a span of WAL went, relation by relation: pg_walinspect's records
 * between two LSNs, each counted against the relation of its first block
 * (heap, TOAST, each index) or, with no block, its resource manager
 * (transaction commits, for one). Needs the pg_walinspect extension (Postgres
 * 15+, superuser to create) and a quiet server: whatever else writes between
 * the two LSNs is counted too.
 */
export async function walByRelation(pool: Pool, from: string, to: string): Promise<Map<string, { records: number; bytes: number; fpiBytes: number }>> {
  await pool.query('CREATE EXTENSION IF NOT EXISTS pg_walinspect');
  const { rows } = await pool.query<{ what: string; records: string; bytes: string; fpi: string }>(
    `SELECT coalesce(pg_filenode_relation(0, substring(block_ref FROM 'rel \\d+/\\d+/(\\d+)')::oid)::regclass::text,
                     resource_manager || ' ' || record_type) AS what,
            count(*) AS records, sum(record_length) AS bytes, sum(fpi_length) AS fpi
       FROM pg_get_wal_records_info($1::pg_lsn, $2::pg_lsn)
      GROUP BY 1 ORDER BY sum(record_length) DESC`,
    [from, to],
  );
  return new Map(rows.map((r) => [r.what, { records: Number(r.records), bytes: Number(r.bytes), fpiBytes: Number(r.fpi) }]));
}
