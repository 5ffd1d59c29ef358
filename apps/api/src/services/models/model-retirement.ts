import { AuditAction, type ModelRetirement, type ModelRoute } from '@inferq/contracts';
import { AppError, type Logger } from '@inferq/core';
import {
  claimRetiredArtifacts,
  countUnfinishedJobsByVersion,
  deleteModelRoutes,
  insertAuditEntries,
  listModelRoutes,
  listModelVersions,
  listModelsWithRetiredArtifacts,
  lockModelName,
  retireModelVersions,
  withTransaction,
  type Pool,
} from '@inferq/db';
import type { Storage } from '@inferq/storage';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';
import type { ModelsService } from './models-service.ts';

export interface ModelRetirementService {
  /**
   * Retires `name:version`, or every version of `name`: no new job may name
   * it, jobs already queued or running finish. A version with a weight above
   * 0 in the routing table is refused (409 MODEL_VERSION_ROUTED) unless
   * `reroute`, which takes it out of the table. Idempotent; audited as
   * `model:retired` when something changed.
   */
  retire(ref: string, options: { reroute: boolean }, actor: AuditActor): Promise<ModelRetirement>;
  /**
   * Deletes the stored artifacts (and tokenizers) of retired versions that no
   * queued or running job needs, retired at least `graceMs` ago. Safe on
   * several API replicas: each model name is swept under its lock.
   */
  sweepRetiredArtifacts(graceMs: number): Promise<Array<{ name: string; version: number }>>;
}

function parseRef(ref: string): { name: string; version: number | undefined } {
  const [name = '', versionText] = ref.split(':');
  return { name, version: versionText === undefined ? undefined : Number(versionText) };
}

const routesOf = (rows: Array<{ version: number; weight: number }>): ModelRoute[] => rows.map(({ version, weight }) => ({ version, weight }));

function routedError(name: string, routed: ModelRoute[], total: number): AppError {
  const shares = routed.map((r) => `version ${r.version} (weight ${r.weight} of ${total})`).join(', ');
  return new AppError(
    'MODEL_VERSION_ROUTED',
    `the routing table of model "${name}" sends unversioned jobs to ${shares}: take it out with PUT /v1/models/${name}/routing, ` +
      'or retire with ?reroute=true to remove it from the table',
  );
}

export function createModelRetirement(deps: { pool: Pool; storage: Storage; models: ModelsService; logger: Logger }): ModelRetirementService {
  return {
    async retire(ref, { reroute }, actor) {
      const { name, version } = parseRef(ref);
      const { versions, routing } = await withTransaction(deps.pool, async (client) => {
        await lockModelName(client, name);
        const all = await listModelVersions(client, name);
        if (all.length === 0) throw new AppError('MODEL_NOT_FOUND', `model "${name}" is not registered`);
        if (version !== undefined && !all.some((m) => m.version === version))
          throw new AppError('MODEL_NOT_FOUND', `model "${name}:${version}" is not registered`);
        const targets = version === undefined ? all.map((m) => m.version) : [version];
        const previous = routesOf(await listModelRoutes(client, [name]));
        const routed = previous.filter((r) => r.weight > 0 && targets.includes(r.version));
        if (routed.length > 0 && !reroute)
          throw routedError(
            name,
            routed,
            previous.reduce((sum, r) => sum + r.weight, 0),
          );
        // The others keep their weights, so their shares grow in proportion; a table left with no weight above 0 is removed.
        const rest = previous.filter((r) => !targets.includes(r.version));
        const current = rest.some((r) => r.weight > 0) ? rest : [];
        const rerouted = current.length !== previous.length;
        if (rerouted)
          await deleteModelRoutes(
            client,
            name,
            current.map((r) => r.version),
          );
        const retired = await retireModelVersions(client, name, targets, actor.keyId);
        if (retired.length > 0 || rerouted) {
          const resource = version === undefined ? `models/${name}` : `models/${name}:${version}`;
          const details = { versions: retired.map((m) => m.version), reroute, ...(rerouted ? { routing: current, previous } : {}) };
          await insertAuditEntries(client, [auditEntry(actor, AuditAction.ModelRetired, resource, details)]);
        }
        const after = await listModelVersions(client, name);
        return { versions: after.filter((m) => targets.includes(m.version)), routing: current };
      });
      // Other API processes see the retirement within their cache TTL (CACHE_TTL_MS).
      deps.models.forget(name);
      const unfinished = await countUnfinishedJobsByVersion(
        deps.pool,
        name,
        versions.map((m) => m.version),
      );
      return {
        name,
        versions: versions.map((m) => ({ version: m.version, retiredAt: m.retiredAt!, unfinishedJobs: unfinished.get(m.version) ?? 0 })),
        routing,
      };
    },

    async sweepRetiredArtifacts(graceMs) {
      const swept: Array<{ name: string; version: number }> = [];
      for (const name of await listModelsWithRetiredArtifacts(deps.pool, graceMs)) {
        // The objects go before the commit: a failed delete rolls the claim back, and the next sweep tries again.
        const { versions, keys } = await withTransaction(deps.pool, async (client) => {
          await lockModelName(client, name);
          const claimed = await claimRetiredArtifacts(client, name, graceMs);
          if (claimed.keys.length > 0) await deps.storage.deleteObjects(claimed.keys);
          return claimed;
        });
        if (versions.length === 0) continue;
        deps.logger.info({ model: name, modelVersions: versions, objects: keys.length }, 'retired model artifacts deleted');
        swept.push(...versions.map((version) => ({ name, version })));
      }
      return swept;
    },
  };
}
