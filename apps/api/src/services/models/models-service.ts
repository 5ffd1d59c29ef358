import { createHash, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import {
  AuditAction,
  DEFAULT_LATENCY_TARGET_MS,
  MODEL_NAME_PATTERN,
  type Batching,
  type EmbeddingSettings,
  type ModelRoute,
  type ModelRouting,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import {
  deleteModelRoutes,
  findModel,
  insertAuditEntries,
  insertModelVersion,
  listLatestModels,
  listModelRoutes,
  listModelVersions,
  lockModelName,
  upsertModelRoutes,
  withTransaction,
  type ModelRecord,
  type ModelRouteRecord,
  type Pool,
} from '@inferq/db';
import { OnnxModelError, readOnnxSignature } from '@inferq/onnx-model';
import { modelArtifactKey, modelTokenizerKey, type Storage } from '@inferq/storage';
import { auditEntry, type AuditActor } from '../keys/audit-service.ts';
import { embeddingSettingsFor, type EmbeddingUpload } from './embedding-settings.ts';
import { parseTokenizer } from './tokenizers.ts';

/** The stored model version the service returns; routes take the type from here, never from packages/db (api-routes-through-services). */
export type { ModelRecord } from '@inferq/db';

interface RegisterModelInput {
  name: string;
  bytes: Uint8Array;
  batching: Partial<Batching>;
  /** Answer repeated inputs from stored results (see ModelSchema.responseCache). */
  responseCache: boolean;
  /** An encoder's tokenizer.json and embedding settings: the model serves /v1/embeddings. */
  embedding?: EmbeddingUpload & { tokenizer: Uint8Array };
  /** The uploader: recorded as the model's creator and in the audit log. */
  actor: AuditActor;
}

export interface ModelsService {
  registerModel(input: RegisterModelInput): Promise<ModelRecord>;
  /**
   * Resolves `name` (its newest version that is not retired) or `name:version`
   * for a new job, cached briefly for the submit path: 410 MODEL_VERSION_RETIRED
   * for a retired version, or a name whose versions are all retired.
   */
  resolveModel(ref: string): Promise<ModelRecord>;
  /** Like resolveModel, but a retired version is returned as it is (its `retiredAt` set): for views. */
  lookupModel(ref: string): Promise<ModelRecord>;
  /** Drops what this process cached of a model's versions and routing table (after a retirement). */
  forget(name: string): void;
  /**
   * The version a job for `ref` runs on: `name:version` as is; `name` by its
   * routing table's weights when it has one (the same `routingKey` always
   * lands on the same version while the table is unchanged), else the latest.
   */
  routeModel(ref: string, options?: { routingKey?: string }): Promise<ModelRecord>;
  /** `ref` looked up (retired versions too), with its name's routing table. */
  describeModel(ref: string): Promise<ModelRecord>;
  getRouting(name: string): Promise<ModelRouting>;
  /** Replaces the routing table (empty: no routing) and audits the change with the table it replaced. */
  setRouting(name: string, versions: ModelRoute[], actor: AuditActor): Promise<ModelRouting>;
  /** The latest version of each model (the newest retired one when all are), with its routing table. */
  listModels(): Promise<ModelRecord[]>;
  listVersions(name: string): Promise<ModelRecord[]>;
}

const DEFAULT_MAX_BATCH_SIZE = 32;
const DEFAULT_MAX_BATCH_DELAY_MS = 5;

const toRoutes = (rows: ModelRouteRecord[]): ModelRoute[] => rows.map(({ version, weight }) => ({ version, weight }));
const toRouting = (name: string, rows: ModelRouteRecord[]): ModelRouting => ({
  name,
  versions: toRoutes(rows),
  updatedAt: rows.reduce<string | null>((at, r) => (at === null || r.updatedAt > at ? r.updatedAt : at), null),
});

/** Where a sticky key falls in [0, 1): a stable hash, so every API process sends it to the same version. */
function stickyPoint(name: string, routingKey: string): number {
  return createHash('sha256').update(name).update('\0').update(routingKey).digest().readUInt32BE(0) / 2 ** 32;
}

/**
 * Weights are laid out in version order over [0, total); the point is scaled
 * to the total, so a weight change moves only the keys in the shifted range.
 */
export function pickRoutedVersion(routes: ModelRoute[], point: number): number {
  const total = routes.reduce((sum, r) => sum + r.weight, 0);
  const at = point * total;
  let edge = 0;
  for (const r of routes) {
    edge += r.weight;
    if (at < edge) return r.version;
  }
  return routes.findLast((r) => r.weight > 0)!.version;
}

function invalidRouting(pointer: string, detail: string): AppError {
  return new AppError('VALIDATION_FAILED', `routing table: ${detail}`, {
    errors: [{ pointer: `/body/versions${pointer}`, code: 'VALIDATION_FAILED', detail }],
  });
}

/**
 * A lookup cached for `ttlMs` and made once however many submits ask at the same time (a batch submits hundreds of
 * lines at once: without it each missed the cache and queried). A failed lookup is not kept. CACHE_TTL_MS 0 keeps
 * nothing past the lookup in flight.
 */
const lookupCache = <V extends object>(ttlMs: number, fetchMethod: (key: string) => Promise<V>) =>
  new LRUCache<string, V>({ max: 1_000, ttl: Math.max(1, ttlMs), fetchMethod, ignoreFetchAbort: true });

export function createModelsService(deps: { pool: Pool; storage: Storage; cacheTtlMs: number }): ModelsService {
  const cache = lookupCache(deps.cacheTtlMs, async (ref) => {
    const [name, versionText, ...rest] = ref.split(':');
    const version = versionText === undefined ? undefined : Number(versionText);
    if (!name || !MODEL_NAME_PATTERN.test(name) || rest.length > 0 || (version !== undefined && !(Number.isSafeInteger(version) && version > 0))) {
      throw new AppError('MODEL_NOT_FOUND', `"${ref.slice(0, 100)}" is not a model reference (name or name:version)`);
    }
    const model = await findModel(deps.pool, name, version);
    if (!model) throw new AppError('MODEL_NOT_FOUND', `model "${ref}" is not registered`);
    return model;
  });
  // The table, not a chosen version, is cached: weights apply per job. An empty table is cached too.
  const routesCache = lookupCache(deps.cacheTtlMs, async (name) => toRoutes(await listModelRoutes(deps.pool, [name])));
  const service: ModelsService = {
    async registerModel({ name, bytes, batching, responseCache, embedding: embeddingUpload, actor }) {
      let signature;
      try {
        signature = readOnnxSignature(bytes);
      } catch (err) {
        if (err instanceof OnnxModelError) throw new AppError(err.code, err.message);
        throw err;
      }
      let embedding: EmbeddingSettings | undefined;
      let tokenizerKey = null;
      if (embeddingUpload) {
        const tokenizerSha256 = createHash('sha256').update(embeddingUpload.tokenizer).digest('hex');
        embedding = embeddingSettingsFor(signature, embeddingUpload, { json: parseTokenizer(embeddingUpload.tokenizer).json, sha256: tokenizerSha256 });
        tokenizerKey = modelTokenizerKey(name, tokenizerSha256);
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const artifactKey = modelArtifactKey(name, sha256);
      // A model without a dynamic leading dim cannot stack jobs: it runs them one at a time, so there is nothing to adapt.
      const maxBatchSize = signature.batchable ? (batching.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE) : 1;
      const mode = signature.batchable ? (batching.mode ?? 'fixed') : 'fixed';
      // Under the name's lock from upload to row: the sweep of retired artifacts (same bytes, same key) cannot delete the
      // objects in between. The lock also orders concurrent uploads of the name, so the version number never races.
      const model = await withTransaction(deps.pool, async (client) => {
        await lockModelName(client, name);
        if (embeddingUpload && tokenizerKey) await deps.storage.putObject(tokenizerKey, embeddingUpload.tokenizer, { contentType: 'application/json' });
        await deps.storage.putObject(artifactKey, bytes, { contentType: 'application/octet-stream' });
        return insertModelVersion(client, {
          id: randomUUID(),
          name,
          artifactKey,
          sha256,
          sizeBytes: bytes.byteLength,
          signature,
          responseCache,
          embedding,
          tokenizerKey,
          createdBy: actor.keyId,
          batching: {
            maxBatchSize,
            maxBatchDelayMs: batching.maxBatchDelayMs ?? DEFAULT_MAX_BATCH_DELAY_MS,
            mode,
            latencyTargetMs: mode === 'auto' ? (batching.latencyTargetMs ?? DEFAULT_LATENCY_TARGET_MS) : null,
          },
        });
      });
      await insertAuditEntries(deps.pool, [
        auditEntry(actor, AuditAction.ModelUploaded, `models/${model.name}:${model.version}`, { sha256, sizeBytes: model.sizeBytes }),
      ]);
      cache.delete(name);
      return model;
    },
    lookupModel: (ref) => cache.forceFetch(ref),
    async resolveModel(ref) {
      const model = await service.lookupModel(ref);
      if (model.retiredAt === undefined) return model;
      throw new AppError(
        'MODEL_VERSION_RETIRED',
        ref.includes(':')
          ? `model ${model.name}:${model.version} was retired at ${model.retiredAt}: it takes no new jobs`
          : `every version of model "${model.name}" is retired: it takes no new jobs`,
      );
    },
    forget(name) {
      for (const ref of [...cache.keys()]) if (ref === name || ref.startsWith(`${name}:`)) cache.delete(ref);
      routesCache.delete(name);
    },
    async routeModel(ref, { routingKey } = {}) {
      if (!MODEL_NAME_PATTERN.test(ref)) return service.resolveModel(ref);
      const routes = await routesCache.forceFetch(ref);
      if (routes.length === 0) return service.resolveModel(ref);
      const version = pickRoutedVersion(routes, routingKey === undefined ? Math.random() : stickyPoint(ref, routingKey));
      return service.resolveModel(`${ref}:${version}`);
    },
    async describeModel(ref) {
      const model = await service.lookupModel(ref);
      return { ...model, routing: toRoutes(await listModelRoutes(deps.pool, [model.name])) };
    },
    async getRouting(name) {
      await service.lookupModel(name);
      return toRouting(name, await listModelRoutes(deps.pool, [name]));
    },
    async setRouting(name, versions, actor) {
      const rows = await withTransaction(deps.pool, async (client) => {
        // Against a retirement in flight: it must not see a version routed that this table still names, nor the reverse.
        await lockModelName(client, name);
        const registered = new Map((await listModelVersions(client, name)).map((m) => [m.version, m]));
        if (registered.size === 0) throw new AppError('MODEL_NOT_FOUND', `model "${name}" is not registered`);
        const seen = new Set<number>();
        versions.forEach(({ version }, i) => {
          if (seen.has(version)) throw invalidRouting(`/${i}/version`, `version ${version} is listed twice`);
          const model = registered.get(version);
          if (!model) throw invalidRouting(`/${i}/version`, `${name}:${version} is not registered`);
          if (model.retiredAt !== undefined)
            throw new AppError('MODEL_VERSION_RETIRED', `routing table: ${name}:${version} is retired and takes no jobs`, {
              errors: [{ pointer: `/body/versions/${i}/version`, code: 'MODEL_VERSION_RETIRED', detail: 'retired' }],
            });
          seen.add(version);
        });
        if (versions.length > 0 && versions.every((r) => r.weight === 0)) throw invalidRouting('', 'at least one weight must be above 0');
        const previous = await listModelRoutes(client, [name]);
        await upsertModelRoutes(
          client,
          versions.map((r) => ({ modelName: name, version: r.version, weight: r.weight, updatedBy: actor.keyId })),
        );
        await deleteModelRoutes(
          client,
          name,
          versions.map((r) => r.version),
        );
        await insertAuditEntries(client, [auditEntry(actor, AuditAction.ModelRouted, `models/${name}`, { versions, previous: toRoutes(previous) })]);
        return listModelRoutes(client, [name]);
      });
      // Other API processes pick the new table up within their cache TTL.
      routesCache.delete(name);
      return toRouting(name, rows);
    },
    async listModels() {
      const models = await listLatestModels(deps.pool);
      const byName = new Map<string, ModelRoute[]>();
      for (const r of await listModelRoutes(
        deps.pool,
        models.map((m) => m.name),
      ))
        byName.set(r.modelName, [...(byName.get(r.modelName) ?? []), { version: r.version, weight: r.weight }]);
      return models.map((m) => ({ ...m, routing: byName.get(m.name) ?? [] }));
    },
    listVersions: (name) => listModelVersions(deps.pool, name),
  };
  return service;
}
