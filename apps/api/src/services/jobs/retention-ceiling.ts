import { AppError } from '@inferq/core';

/**
 * The longest a job may be kept before it is purged: the bucket's expiry rule
 * for job objects (S3_JOB_OBJECTS_EXPIRE_DAYS, 0: none) would delete its S3
 * tensors earlier, leaving a job that reads as whole but whose objects are
 * gone; and its day's partition is dropped after JOB_TOMBSTONE_RETENTION_S,
 * purged or not.
 */
export const retentionCeilingS = (objectExpireDays: number, tombstoneRetentionS: number): number =>
  objectExpireDays > 0 ? Math.min(objectExpireDays * 86_400, tombstoneRetentionS) : tombstoneRetentionS;

/** Refuses a retention override longer than the ceiling (400, pointing at the body's retentionS). */
export function assertRetentionFits(retentionS: number | null | undefined, ceilingS: number | undefined): void {
  if (retentionS === null || retentionS === undefined || ceilingS === undefined || retentionS <= ceilingS) return;
  const detail =
    `retentionS ${retentionS} is longer than jobs can be kept here (${ceilingS} s: ` +
    'the bucket expiry S3_JOB_OBJECTS_EXPIRE_DAYS and the tombstone retention JOB_TOMBSTONE_RETENTION_S)';
  throw new AppError('VALIDATION_FAILED', detail, { errors: [{ pointer: '/body/retentionS', code: 'VALIDATION_FAILED', detail }] });
}
