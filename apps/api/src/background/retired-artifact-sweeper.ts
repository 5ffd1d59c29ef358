import { isRedisOutageError } from '@inferq/queue';
import { createPeriodicTask, type Logger } from '@inferq/core';
import type { ModelRetirementService } from '../services/models/model-retirement.ts';

/**
 * Deletes the artifacts of retired model versions once no queued or running
 * job needs them and their grace has passed (RETIRED_ARTIFACT_GRACE_MS).
 * Safe on several API replicas: each model name is swept under its lock.
 */
export function createRetiredArtifactSweeper(deps: { retirement: ModelRetirementService; logger: Logger; intervalMs: number; graceMs: number }) {
  return createPeriodicTask({
    what: 'retired artifact sweep',
    intervalMs: deps.intervalMs,
    logger: deps.logger,
    run: () => deps.retirement.sweepRetiredArtifacts(deps.graceMs),
    expected: isRedisOutageError,
  });
}
