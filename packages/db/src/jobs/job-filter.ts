import type { JobStatus, Priority } from '@inferq/contracts';

/** Which jobs a list or a bulk action covers; every field narrows it. */
export interface JobFilter {
  /** The caller's scope: a key sees its own jobs; null is an admin, who sees every key's. */
  ownerKeyId: string | null;
  /** One API key's jobs (an admin looking at another key). */
  keyId?: string;
  status?: JobStatus;
  modelName?: string;
  priority?: Priority;
  createdAfter?: Date;
  createdBefore?: Date;
  /** A job id or a prefix of it: hex digits, dashes ignored. */
  idPrefix?: string;
  errorCode?: string;
  /** Text anywhere in the error message, case-insensitive. */
  errorText?: string;
  /** The jobs a Batch API batch submitted for its lines. */
  bulkBatchId?: string;
}

/**
 * The filter as SQL conditions on `jobs`, its values appended to `params`
 * (placeholders continue from their length). An id prefix is a range on the
 * primary key; error text is a bounded ILIKE scan inside whatever the other
 * conditions and the LIMIT leave; a Batch API batch is the job ids its lines
 * recorded.
 */
export function jobFilterConditions(f: JobFilter, params: unknown[]): string[] {
  const where: string[] = [];
  const add = (sql: (p: string) => string, value: unknown): void => {
    params.push(value);
    where.push(sql(`$${params.length}`));
  };
  if (f.ownerKeyId !== null) add((p) => `owner_key_id = ${p}::uuid`, f.ownerKeyId);
  if (f.keyId !== undefined) add((p) => `owner_key_id = ${p}::uuid`, f.keyId);
  if (f.status !== undefined) add((p) => `status = ${p}`, f.status);
  if (f.modelName !== undefined) add((p) => `model_name = ${p}`, f.modelName);
  if (f.priority !== undefined) add((p) => `priority = ${p}`, f.priority);
  if (f.createdAfter !== undefined) add((p) => `created_at >= ${p}::timestamptz`, f.createdAfter);
  if (f.createdBefore !== undefined) add((p) => `created_at < ${p}::timestamptz`, f.createdBefore);
  if (f.idPrefix !== undefined) {
    const [low, high] = uuidRange(f.idPrefix);
    add((p) => `id >= ${p}::uuid`, low);
    add((p) => `id <= ${p}::uuid`, high);
  }
  if (f.errorCode !== undefined) add((p) => `error_code = ${p}`, f.errorCode);
  if (f.errorText !== undefined) add((p) => `error_message ILIKE ${p}`, `%${f.errorText.replace(/[\\%_]/g, '\\$&')}%`);
  // The batch's own record of its lines' jobs, read by its primary key: no index on job metadata is needed.
  if (f.bulkBatchId !== undefined) add((p) => `id IN (SELECT unnest(job_ids) FROM bulk_batch_requests WHERE batch_id = ${p})`, f.bulkBatchId);
  return where;
}

/** The lowest and highest uuid starting with these hex digits (uuids order as their bytes do). */
export function uuidRange(prefix: string): [string, string] {
  const hex = prefix.replace(/-/g, '').toLowerCase();
  if (!/^[0-9a-f]{1,32}$/.test(hex)) throw new RangeError(`not a job id prefix: ${prefix}`);
  const asUuid = (h: string): string => `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
  return [asUuid(hex.padEnd(32, '0')), asUuid(hex.padEnd(32, 'f'))];
}
