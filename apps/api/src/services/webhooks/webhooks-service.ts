import type { WebhookDeliveries } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findJobWebhook, type JobRecord, type Pool } from '@inferq/db';
import { deriveSigningKey, formatSigningSecret } from './signing.ts';

export interface WebhooksService {
  /** A job's webhook state and every delivery attempt; ownerKeyId null means any owner (admin). */
  getDeliveries(jobId: string, ownerKeyId: string | null): Promise<WebhookDeliveries>;
  /** The secret that verifies deliveries of the jobs this API key submits. */
  signingSecret(keyId: string): string;
}

export function createWebhooksService(deps: {
  pool: Pool;
  signingSecret: string;
  /** The jobs service's read: 404 for another key's job, 410 JOB_PURGED for a tombstone (its deliveries are gone). */
  getJob(id: string, ownerKeyId: string | null): Promise<JobRecord>;
}): WebhooksService {
  return {
    async getDeliveries(jobId, ownerKeyId) {
      await deps.getJob(jobId, ownerKeyId);
      const webhook = await findJobWebhook(deps.pool, jobId, ownerKeyId);
      if (!webhook) throw new AppError('JOB_NOT_FOUND', `job ${jobId} does not exist`);
      const { deliveries, nextAttemptAt, ...rest } = webhook;
      return { ...rest, nextAttemptAt: nextAttemptAt?.toISOString() ?? null, items: deliveries };
    },
    signingSecret: (keyId) => formatSigningSecret(deriveSigningKey(deps.signingSecret, keyId)),
  };
}
