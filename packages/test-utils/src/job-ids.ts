import { randomBytes } from 'node:crypto';
import type { NewJob } from '@inferq/db';

/**
 * A UUIDv7 for `at` (the API's job ids are UUIDv7): jobs is partitioned by
 * id as a time range, so a row written by a test needs an id of a day that
 * has a partition (a random UUIDv4 lands anywhere in time and usually in none).
 */
export function testJobId(at: Date = new Date()): string {
  const b = randomBytes(16);
  b.writeUIntBE(at.getTime(), 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** A queued job row for tests that write jobs themselves (insertJobs): a UUIDv7 id, no inputs, no options; `over` sets the rest. */
export function newTestJob(ownerKeyId: string, over: Partial<NewJob> = {}): NewJob {
  return {
    id: testJobId(),
    ownerKeyId,
    modelName: 'mlp',
    modelVersion: 1,
    priority: 'normal',
    idempotencyKey: null,
    requestHash: null,
    inputs: [],
    metadata: {},
    deadlineAt: null,
    webhookUrl: null,
    inputSha256: null,
    ...over,
  };
}
