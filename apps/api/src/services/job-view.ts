import { encodeTensorJson, decodeBase64, type Job, type OutputTensor, type StoredTensor } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import type { Storage } from '@inferq/storage';

export const jobLinks = (id: string) => ({ self: `/v1/jobs/${id}`, cancel: `/v1/jobs/${id}/cancel` });

/** The job as the API shows it, without outputs (lists). */
export function toJobSummary(r: JobRecord): Omit<Job, 'outputs'> {
  return {
    id: r.id,
    model: r.modelName,
    modelVersion: r.modelVersion,
    priority: r.priority,
    status: r.status,
    createdAt: r.createdAt.toISOString(),
    startedAt: r.startedAt?.toISOString() ?? null,
    finishedAt: r.finishedAt?.toISOString() ?? null,
    queueMs: r.queueMs,
    inferMs: r.inferMs,
    batchSize: r.batchSize,
    batchId: r.batchId,
    workerId: r.workerId,
    items: r.items,
    deviceMs: r.deviceMs,
    ...(r.batch ?? {}),
    attempts: r.attempts,
    cacheHit: r.cachedFrom !== null,
    error: r.errorCode ? { code: r.errorCode, message: r.errorMessage ?? '' } : null,
    metadata: r.metadata,
    deadline: r.deadlineAt?.toISOString() ?? null,
    webhookUrl: r.webhookUrl,
    links: jobLinks(r.id),
  };
}

async function toOutputTensor(t: StoredTensor, storage: Storage, urlTtlS: number, encoding: 'json' | 'base64'): Promise<OutputTensor> {
  const head = { name: t.name, datatype: t.datatype, shape: t.shape, bytes: t.bytes };
  if (t.key) return { ...head, url: await storage.presignGet(t.key, urlTtlS) };
  const b64 = t.b64 ?? '';
  return { ...head, data: encoding === 'base64' ? b64 : encodeTensorJson(t.datatype, decodeBase64(b64) ?? new Uint8Array()) };
}

const tensorSummary = ({ name, datatype, shape, bytes }: StoredTensor) => ({ name, datatype, shape, bytes });

/** The job with its input headers and its outputs: inline data, or presigned URLs for outputs kept in S3. */
export async function toJobDetail(r: JobRecord, storage: Storage, urlTtlS: number, encoding: 'json' | 'base64'): Promise<Job> {
  const detail = { ...toJobSummary(r), inputs: r.inputs.map(tensorSummary) };
  if (!r.outputs) return detail;
  return { ...detail, outputs: await Promise.all(r.outputs.map((t) => toOutputTensor(t, storage, urlTtlS, encoding))) };
}
