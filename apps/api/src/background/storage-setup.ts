import pRetry from 'p-retry';
import type { Logger } from '@inferq/core';
import type { Storage } from '@inferq/storage';

export interface StorageExpiryRule {
  id: string;
  prefix: string;
  days: number;
  /** What the rule is for, in its log line (`job objects`, `uploads`). */
  what: string;
}

export interface StorageSetup {
  /** Resolves once the bucket exists (its expiry rules set or warned about); tries until it does. */
  run(): Promise<void>;
  /** For /readyz: whether the bucket is there, and what failed while it is not. */
  check(): { ok: boolean; detail?: string };
}

/**
 * The API's part of object storage at start: the bucket made if missing and
 * the expiry rules set. Object storage may start after the API (MinIO beside
 * it in compose or a cluster), so a failure does not stop the process: it is
 * told once, /readyz reports it, and it is tried again with a backoff up to
 * 10 s until it succeeds. Small inline jobs run meanwhile; model uploads, large
 * inputs and outputs wait for it.
 */
export function createStorageSetup(deps: {
  storage: Pick<Storage, 'ensureBucket' | 'ensureExpiryRule'>;
  logger: Logger;
  rules: StorageExpiryRule[];
}): StorageSetup {
  /** Why the bucket is not ready yet; undefined once it is. */
  let notReady: string | undefined = 'not checked yet';

  async function setUp(): Promise<void> {
    await deps.storage.ensureBucket();
    for (const rule of deps.rules) {
      await deps.storage
        .ensureExpiryRule(rule)
        .then((outcome) => deps.logger.info({ outcome, days: rule.days, prefix: rule.prefix }, `bucket expiry rule for ${rule.what}`))
        .catch((err: Error) => deps.logger.warn({ err: err.message }, `could not set the bucket expiry rule for ${rule.what}`));
    }
  }

  return {
    async run() {
      let failed = false;
      await pRetry(setUp, {
        retries: Number.POSITIVE_INFINITY,
        minTimeout: 500,
        maxTimeout: 10_000,
        onFailedAttempt: ({ error }) => {
          notReady = error.message;
          if (!failed) deps.logger.warn({ err: error.message }, 'object storage cannot be reached; retrying until it answers (see /readyz)');
          failed = true;
        },
      });
      if (failed) deps.logger.info('object storage reached; its bucket is ready');
      notReady = undefined;
    },
    check: () => (notReady === undefined ? { ok: true } : { ok: false, detail: `the bucket is not ready: ${notReady}` }),
  };
}
