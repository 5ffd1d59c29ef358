import type { Pool } from '@inferq/db';
import type { Storage } from '@inferq/storage';

/**
 * Whether every succeeded job's stored result comes from one attempt: its
 * batch row exists and names the same worker, its inference time is that
 * batch's, its device time is its share of that batch's (by items), and each
 * output object lies under that batch (output keys are per batch) and exists.
 * Returns one line per job that breaks this; empty when all hold.
 */
export async function auditAttempts(pool: Pool, storage: Storage, jobIds: readonly string[]): Promise<string[]> {
  const { rows } = await pool.query<{
    id: string;
    batch_id: string | null;
    worker_id: string | null;
    infer_ms: number | null;
    items: number | null;
    device_ms: number | null;
    outputs: Array<{ key?: string }> | null;
    b_id: string | null;
    b_worker: string | null;
    b_device: string | null;
    b_infer_ms: number | null;
    b_items: number | null;
  }>(
    `SELECT j.id, j.batch_id, j.worker_id, j.infer_ms, j.items, j.device_ms, j.outputs,
            b.id AS b_id, b.worker_id AS b_worker, b.device AS b_device, b.infer_ms AS b_infer_ms, b.items AS b_items
       FROM jobs j LEFT JOIN batches b ON b.id = j.batch_id
      WHERE j.id = ANY($1::uuid[]) AND j.status = 'succeeded'`,
    [jobIds],
  );
  const broken: string[] = [];
  for (const r of rows) {
    const why: string[] = [];
    if (!r.b_id) why.push(`no batch row for batch ${r.batch_id}`);
    else {
      if (r.b_worker !== r.worker_id) why.push(`worker ${r.worker_id} but its batch ran on ${r.b_worker}`);
      if (!r.b_device) why.push('batch without a device');
      if (r.infer_ms !== r.b_infer_ms) why.push(`infer_ms ${r.infer_ms} but its batch's is ${r.b_infer_ms}`);
      const share = (r.b_infer_ms! * (r.items ?? 0)) / r.b_items!;
      if (r.device_ms === null || Math.abs(r.device_ms - share) > 1e-6) why.push(`device_ms ${r.device_ms}, not its share ${share} of its batch`);
    }
    for (const t of r.outputs ?? []) {
      if (!t.key) continue;
      if (!t.key.includes(`/${r.batch_id}/`)) why.push(`output ${t.key} is not its batch's`);
      else if (!(await storage.headObject(t.key))) why.push(`output ${t.key} is missing`);
    }
    if (why.length > 0) broken.push(`${r.id}: ${why.join('; ')}`);
  }
  return broken;
}
