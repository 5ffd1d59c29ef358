import { encodeBase64, encodeTensorJson, type Job, type OutputTensor, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { JobRecord } from '@inferq/db';
import type { TensorStore } from '@inferq/storage';

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
    keepInputs: r.keepInputs,
    ...(r.inputsDroppedAt && { inputsDroppedAt: r.inputsDroppedAt.toISOString() }),
    ...(r.purgedAt && { purgedAt: r.purgedAt.toISOString(), purgeReason: r.purgeReason ?? 'retention' }),
    links: jobLinks(r.id),
  };
}

/** 410 JOB_PURGED for a tombstone, with when and why and what was kept (RFC 9457 extension members). */
export function jobPurgedError(r: JobRecord): AppError {
  const purgedAt = (r.purgedAt ?? new Date()).toISOString();
  const purgeReason = r.purgeReason ?? 'retention';
  const why = purgeReason === 'deleted' ? 'it was deleted' : 'its retention ran out';
  return new AppError('JOB_PURGED', `job ${r.id} was purged at ${purgedAt}: ${why}; only its tombstone is kept`, {
    extensions: { purgedAt, purgeReason, job: toJobSummary(r) },
  });
}

/**
 * 410 JOB_LOST for a job the record lost (lost_jobs): accepted, then its row dropped with the database's last commits
 * (a failover to an asynchronous standby), found by a worker (its queue entry without a row) or by the API that accepted
 * it (it ran and finished on the lost timeline).
 */
export function jobLostError(l: { lostAt: Date }): AppError {
  return new AppError(
    'JOB_LOST',
    'this job was accepted, but a database failover to an asynchronous standby lost its record, and any result it had; submit it again',
    {
      extensions: { lostAt: l.lostAt.toISOString() },
    },
  );
}

/** 410 JOB_INPUTS_DROPPED for an input download (or a retry) once the inputs are gone. */
export function inputsDroppedError(r: JobRecord): AppError {
  const inputsDroppedAt = (r.inputsDroppedAt ?? new Date()).toISOString();
  return new AppError(
    'JOB_INPUTS_DROPPED',
    `the inputs of job ${r.id} were dropped at ${inputsDroppedAt} (input retention; submit with keepInputs to keep them)`,
    {
      extensions: { inputsDroppedAt },
    },
  );
}

type TensorLocator = Pick<TensorStore, 'locateTensor'>;

async function toOutputTensor(t: StoredTensor, tensors: TensorLocator, urlTtlS: number, encoding: 'json' | 'base64'): Promise<OutputTensor> {
  const head = { name: t.name, datatype: t.datatype, shape: t.shape, bytes: t.bytes };
  const at = await tensors.locateTensor(t, urlTtlS);
  if ('url' in at) return { ...head, url: at.url };
  // Inline bytes are kept raw (migration 0022): base64 is made here, at read.
  return { ...head, data: encoding === 'base64' ? encodeBase64(at.data) : encodeTensorJson(t.datatype, at.data) };
}

const tensorSummary = ({ name, datatype, shape, bytes }: StoredTensor) => ({ name, datatype, shape, bytes });

/** The job with its input headers, without outputs: what every detailed view (JSON, framed) starts from. */
export const toJobHead = (r: JobRecord): Omit<Job, 'outputs'> => ({ ...toJobSummary(r), inputs: r.inputs.map(tensorSummary) });

/** The job with its input headers and its outputs: inline data, or presigned URLs for outputs kept in S3. */
export async function toJobDetail(r: JobRecord, tensors: TensorLocator, urlTtlS: number, encoding: 'json' | 'base64'): Promise<Job> {
  const detail = toJobHead(r);
  if (!r.outputs) return detail;
  return { ...detail, outputs: await Promise.all(r.outputs.map((t) => toOutputTensor(t, tensors, urlTtlS, encoding))) };
}
