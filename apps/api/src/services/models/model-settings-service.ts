import { AuditAction, type ModelRetention, type ModelSettings } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findModelRetentions, insertAuditEntries, setModelRetention, withTransaction, type ModelRetentionRecord, type Pool } from '@inferq/db';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';
import type { ModelsService } from './models-service.ts';
import { assertRetentionFits } from '../jobs/retention-ceiling.ts';

export interface ModelSettingsService {
  /** Sets (null: clears) how long finished jobs of a registered model name are kept; audited as `model:retention-set`. */
  setRetention(name: string, retentionS: number | null, actor: AuditActor): Promise<ModelSettings>;
  /** Each name's retention as the model views show it, by name (names without an override get the server's). */
  describeRetentions(names: readonly string[]): Promise<Map<string, ModelRetention>>;
}

/** The server's retentions, which apply where no override does. */
export interface RetentionDefaults {
  /** JOB_RETENTION_S. */
  jobRetentionS: number;
  /** JOB_INPUT_RETENTION_S. */
  inputRetentionS: number;
}

/** What applies to a name's jobs given its override (record) and the server's defaults. */
function effectiveRetention(record: Pick<ModelRetentionRecord, 'retentionS'>, defaults: RetentionDefaults) {
  const effectiveS = record.retentionS ?? defaults.jobRetentionS;
  return {
    retentionS: record.retentionS,
    effectiveS,
    source: record.retentionS === null ? ('default' as const) : ('model' as const),
    // Inputs kept as long as the job (or longer) are purged with it: the input retention does not apply.
    inputRetentionS: defaults.inputRetentionS < effectiveS ? defaults.inputRetentionS : null,
  };
}

export function createModelSettingsService(deps: {
  pool: Pool;
  models: Pick<ModelsService, 'listVersions'>;
  defaults: RetentionDefaults;
  retentionCeilingS?: number;
}): ModelSettingsService {
  return {
    async setRetention(name, retentionS, actor) {
      assertRetentionFits(retentionS, deps.retentionCeilingS);
      if ((await deps.models.listVersions(name)).length === 0) throw new AppError('MODEL_NOT_FOUND', `model "${name}" is not registered`);
      const saved = await withTransaction(deps.pool, async (client) => {
        const record = await setModelRetention(client, name, retentionS, actor.keyId);
        await insertAuditEntries(client, [auditEntry(actor, AuditAction.ModelRetentionSet, `models/${name}`, { retentionS: record.retentionS })]);
        return record;
      });
      return { name, ...effectiveRetention(saved, deps.defaults), updatedAt: saved.updatedAt?.toISOString() ?? null };
    },

    async describeRetentions(names) {
      const records = await findModelRetentions(deps.pool, [...new Set(names)]);
      return new Map(
        records.map((record) => [
          record.modelName,
          { ...effectiveRetention(record, deps.defaults), ...(record.updatedAt && { updatedAt: record.updatedAt.toISOString() }) },
        ]),
      );
    },
  };
}
