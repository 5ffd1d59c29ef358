import { createHash, randomUUID } from 'node:crypto';
import { AuditAction, MODEL_NAME_PATTERN, type Batching } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { findModel, insertAuditEntries, insertModelVersion, listLatestModels, listModelVersions, type ModelRecord, type Pool } from '@inferq/db';
import { OnnxModelError, readOnnxSignature } from '@inferq/onnx-model';
import { modelArtifactKey, type Storage } from '@inferq/storage';
import { auditEntry, type AuditActor } from './audit-service.ts';

export interface RegisterModelInput {
  name: string;
  bytes: Uint8Array;
  batching: Partial<Batching>;
  /** The uploader: recorded as the model's creator and in the audit log. */
  actor: AuditActor;
}

export interface ModelsService {
  registerModel(input: RegisterModelInput): Promise<ModelRecord>;
  /** Resolves `name` (latest version) or `name:version`, cached briefly for the submit path. */
  resolveModel(ref: string): Promise<ModelRecord>;
  listModels(): Promise<ModelRecord[]>;
  listVersions(name: string): Promise<ModelRecord[]>;
}

const DEFAULT_MAX_BATCH_SIZE = 32;
const DEFAULT_MAX_BATCH_DELAY_MS = 5;

export function createModelsService(deps: { pool: Pool; storage: Storage; cacheTtlMs: number }): ModelsService {
  const cache = new Map<string, { model: ModelRecord; expiresAtMs: number }>();
  return {
    async registerModel({ name, bytes, batching, actor }) {
      let signature;
      try {
        signature = readOnnxSignature(bytes);
      } catch (err) {
        if (err instanceof OnnxModelError) throw new AppError(err.code, err.message);
        throw err;
      }
      const sha256 = createHash('sha256').update(bytes).digest('hex');
      const artifactKey = modelArtifactKey(name, sha256);
      await deps.storage.putObject(artifactKey, bytes, { contentType: 'application/octet-stream' });
      // A model without a dynamic leading dim cannot stack jobs: it runs them one at a time.
      const maxBatchSize = signature.batchable ? (batching.maxBatchSize ?? DEFAULT_MAX_BATCH_SIZE) : 1;
      const model = await insertModelVersion(deps.pool, {
        id: randomUUID(), name, artifactKey, sha256, sizeBytes: bytes.byteLength, signature, createdBy: actor.keyId,
        batching: { maxBatchSize, maxBatchDelayMs: batching.maxBatchDelayMs ?? DEFAULT_MAX_BATCH_DELAY_MS },
      });
      // Not in the insert's transaction: insertModelVersion retries on a version race, which a transaction would abort.
      await insertAuditEntries(deps.pool, [auditEntry(actor, AuditAction.ModelUploaded, `models/${model.name}:${model.version}`, { sha256, sizeBytes: model.sizeBytes })]);
      cache.delete(name);
      return model;
    },
    async resolveModel(ref) {
      const cached = cache.get(ref);
      if (cached && cached.expiresAtMs > Date.now()) return cached.model;
      const [name, versionText, ...rest] = ref.split(':');
      const version = versionText === undefined ? undefined : Number(versionText);
      if (!name || !MODEL_NAME_PATTERN.test(name) || rest.length > 0 || (version !== undefined && !(Number.isSafeInteger(version) && version > 0))) {
        throw new AppError('MODEL_NOT_FOUND', `"${ref.slice(0, 100)}" is not a model reference (name or name:version)`);
      }
      const model = await findModel(deps.pool, name, version);
      if (!model) throw new AppError('MODEL_NOT_FOUND', `model "${ref}" is not registered`);
      if (cache.size > 1_000) cache.clear();
      cache.set(ref, { model, expiresAtMs: Date.now() + deps.cacheTtlMs });
      return model;
    },
    listModels: () => listLatestModels(deps.pool),
    listVersions: (name) => listModelVersions(deps.pool, name),
  };
}
