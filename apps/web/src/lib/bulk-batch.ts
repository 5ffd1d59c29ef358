// Pure helpers for Batch API batches (OpenAI's shapes: times in Unix seconds, metadata a string map).
import type { BulkBatch } from '@inferq/sdk';

/** A Unix-seconds time as the ISO string the console's time components take. */
export const unixToIso = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** When the batch ended (Unix seconds), or null while it runs: the time of the status it ended in. */
export function batchEndedAt(batch: BulkBatch): number | null {
  switch (batch.status) {
    case 'completed':
      return batch.completed_at;
    case 'failed':
      return batch.failed_at;
    case 'expired':
      return batch.expired_at;
    case 'cancelled':
      return batch.cancelled_at;
    default:
      return null;
  }
}

/** The batch's moments in order, those that happened (and its deadline while it runs), as `[label, unix seconds]`. */
export function batchTimeline(batch: BulkBatch): Array<[string, number]> {
  const moments: Array<[string, number | null]> = [
    ['Created', batch.created_at],
    ['In progress', batch.in_progress_at],
    ['Cancelling', batch.cancelling_at],
    ['Finalizing', batch.finalizing_at],
    [`Ended (${batch.status})`, batchEndedAt(batch)],
    // A batch that ended before its deadline never expires; its deadline is of no more use.
    ['Expires', batchEndedAt(batch) === null ? batch.expires_at : null],
  ];
  return moments.filter((m): m is [string, number] => m[1] !== null);
}

/** "run=nightly, team=search" in key order; empty without metadata. */
export const metadataSummary = (metadata: BulkBatch['metadata']): string =>
  Object.entries(metadata ?? {})
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');

/** The name a batch's output or error file is saved under: `<batch id>-output.jsonl`. */
export const batchFileName = (batchId: string, kind: 'output' | 'errors'): string => `${batchId}-${kind}.jsonl`;
