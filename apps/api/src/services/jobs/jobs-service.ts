import { v7 as uuidv7 } from 'uuid';
import { type JobAccepted, type JobFilterQuery, type ListJobsQuery, type Priority, type StoredTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import {
  cancelQueuedJob,
  findJob,
  findJobByIdempotencyKey,
  findLostJob,
  insertCachedJob,
  listJobs,
  type JobFilter,
  type JobRecord,
  type NewJob,
  type Pool,
} from '@inferq/db';
import { carriesInputs, type JobProducer } from '@inferq/queue';
import type { TensorStore } from '@inferq/storage';
import { ownerFilter, type Principal } from '../keys/api-keys-service.ts';
import { inputsDroppedError, jobLinks, jobLostError, jobPurgedError } from './view/job-view.ts';
import type { JobViewCache } from './view/job-view-cache.ts';
import type { ModelsService } from '../models/models-service.ts';
import { createJobIntake } from './intake/job-intake.ts';
import type { RecentAccepts } from './intake/recent-accepts.ts';
import { checkInputHeads, decodeInputs, type DecodedInput } from './intake/tensor-intake.ts';
import { checkWebhookUrl } from '../webhooks/url-policy.ts';
import { createBacklogGuard } from './intake/backlog-guard.ts';
import { hashInputs, hashRequest } from './intake/input-hash.ts';
import { createInputStorage, withBytesInHand } from './intake/input-storage.ts';
import type { JobSlot, SubmitTensor } from './intake/submit-inputs.ts';
import type { UploadClaims } from '../uploads/upload-claims.ts';

/** How stale a model's backlog count may be when a submission is admitted against its limit. */
const BACKLOG_REFRESH_MS = 250;

export interface SubmitJobInput {
  principal: Principal;
  model: string;
  /** JSON data, base64, raw bytes, bytes already streamed into `slot`, or uploads to claim (`submit-inputs.ts`). */
  inputs: SubmitTensor[];
  /** The job's id and key time, chosen before the insert: required when an input was streamed into it already. */
  slot?: JobSlot;
  priority: Priority;
  metadata: Record<string, string>;
  idempotencyKey: string | undefined;
  /** X-Routing-Key: sends a routed model's jobs with the same key to the same version. */
  routingKey?: string;
  /** ISO 8601; the job expires if still queued past it. */
  deadline?: string;
  webhookUrl?: string;
  /** W3C trace context of the submitting request, carried to the worker. */
  traceContext?: Record<string, string>;
  /** Keep the input tensors as long as the job, past the input retention. @default false */
  keepInputs?: boolean;
  /**
   * false when the caller knows its `idempotencyKey` is new (the Batch API's lines past any earlier runner's reach): the
   * lookup a replay is answered by is skipped, and a key taken after all is still answered by the insert's conflict.
   * @default true
   */
  mayBeReplay?: boolean;
}

/** A submit as it is before its inputs' bytes are read. */
type SubmitCheck = Pick<SubmitJobInput, 'principal' | 'model' | 'idempotencyKey' | 'routingKey' | 'deadline' | 'webhookUrl'> & {
  inputs: ReadonlyArray<{ name: string; datatype: string; shape: number[] }>;
};

export interface JobsService {
  /** Validates, records (Postgres first: invariant 1) and enqueues one job. */
  submitJob(input: SubmitJobInput): Promise<JobAccepted>;
  /**
   * The checks `submitJob` makes before it reads an input's bytes (the model, the inputs' names, datatypes and shapes
   * against its signature, the size limit, the deadline, the webhook URL), for a body whose bytes come later: a
   * multipart submit stores its parts only once these pass. Passes a replay of a recorded Idempotency-Key unchecked.
   */
  checkSubmit(input: SubmitCheck): Promise<void>;
  /** The job as a poll sees it (job-view-cache.ts); 410 JOB_PURGED when only its tombstone is left. */
  getJob(id: string, ownerKeyId: string | null): Promise<JobRecord>;
  /** Jobs this process has just changed behind the service (a purge, an input drop, a bulk cancel): their next view is read afresh. */
  forgetJobs(ids: Iterable<string>): void;
  /** The job's row as it is, tombstones included (deleting one). */
  findJobRow(id: string, ownerKeyId: string | null): Promise<JobRecord>;
  /**
   * Submits a new job with the same model version, priority and inputs as `id` (re-running a failed one). Under an
   * `idempotencyKey`, once: the same key again answers the job it created (IDEMPOTENCY_CONFLICT for another `id`).
   */
  retryJob(id: string, principal: Principal, idempotencyKey?: string): Promise<JobAccepted>;
  /** The raw little-endian bytes of one input or output tensor, streamed (an S3 object is never held whole). */
  openTensor(id: string, ownerKeyId: string | null, kind: 'inputs' | 'outputs', index: number): Promise<{ tensor: StoredTensor; body: NodeJS.ReadableStream }>;
  listJobs(query: ListJobsQuery, ownerKeyId: string | null): Promise<{ items: JobRecord[]; nextCursor: string | null }>;
  cancelJob(id: string, ownerKeyId: string | null): Promise<JobRecord>;
}

export interface JobsServiceDeps {
  pool: Pool;
  /** What polls answer from memory; without it every view is read from Postgres. */
  views?: JobViewCache;
  producer: JobProducer;
  /** Keeps the inputs (inline or S3) and reads tensors back. */
  tensors: TensorStore;
  models: ModelsService;
  /** submitQueueTimeoutMs: SUBMIT_QUEUE_TIMEOUT_MS (job-intake.ts). @default 3000 */
  /** carriedInputsBytes: QUEUE_CARRIED_INPUTS_MB in bytes (carriesInputs). */
  limits: { inputMaxBytes: number; submitGroupMax: number; queueMaxDepth: number; submitQueueTimeoutMs?: number; carriedInputsBytes?: number };
  /** Accept webhook URLs on loopback, private and link-local addresses (WEBHOOK_ALLOW_PRIVATE). */
  webhookAllowPrivate: boolean;
  /** Told of each response-cache lookup (models with the cache on). */
  onCacheLookup?(model: string, hit: boolean): void;
  /** Claims `upload` inputs (POST /v1/uploads). */
  uploads: UploadClaims;
  /** Every job accepted, checked against the record after a Postgres failover (main.ts). */
  recentAccepts?: RecentAccepts;
  /** INPUT_SEGMENTS (on unless false): a submit group's small inputs go to one segment object; told of each (job-intake.ts). */
  inputSegments?: false | { onSegment?(jobs: number, err?: unknown): void };
}

/** Time-ordered ids: the (created_at, id) keyset order is submission order even within a millisecond. */
const newJobId = (): string => uuidv7();

/** A fresh slot for a submit whose inputs are streamed before the insert. */
export const newJobSlot = (): JobSlot => ({ jobId: newJobId(), createdAt: new Date() });

function parseDeadline(deadline: string | undefined): Date | null {
  if (deadline === undefined) return null;
  const at = new Date(deadline);
  if (!(at.getTime() > Date.now())) {
    throw new AppError('VALIDATION_FAILED', 'deadline has passed', {
      errors: [{ pointer: '/body/deadline', code: 'VALIDATION_FAILED', detail: 'must be in the future' }],
    });
  }
  return at;
}

const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const encodeCursor = (r: { createdAt: Date; id: string }): string => Buffer.from(`${r.createdAt.toISOString()}|${r.id}`).toString('base64url');
function decodeCursor(cursor: string): { createdAt: Date; id: string } {
  const [at, id] = Buffer.from(cursor, 'base64url').toString().split('|');
  const createdAt = new Date(at ?? '');
  // A four-digit year: Date reads years Postgres cannot store (-271821…+275760).
  if (!/^\d{4}-/.test(at ?? '') || Number.isNaN(createdAt.getTime()) || !/^[0-9a-f-]{36}$/.test(id ?? ''))
    throw new AppError('VALIDATION_FAILED', 'cursor is not valid', {
      errors: [{ pointer: '/querystring/cursor', code: 'VALIDATION_FAILED', detail: 'not a cursor from nextCursor' }],
    });
  return { createdAt, id: id! };
}

export function createJobsService(deps: JobsServiceDeps): JobsService {
  const intake = createJobIntake({
    pool: deps.pool,
    producer: deps.producer,
    maxGroupSize: deps.limits.submitGroupMax,
    queueTimeoutMs: deps.limits.submitQueueTimeoutMs ?? 3_000,
    recent: deps.recentAccepts,
    ...(deps.inputSegments !== false && { segmentInputs: deps.tensors.segmentInputs, onSegment: deps.inputSegments?.onSegment }),
  });
  const backlog = createBacklogGuard({ producer: deps.producer, maxDepth: deps.limits.queueMaxDepth, refreshMs: BACKLOG_REFRESH_MS });
  /** Small tensors travel inline; large ones are written to S3 and referenced (invariant 5): the tensor store decides. */
  const storage = createInputStorage({ tensors: deps.tensors, uploads: deps.uploads });

  /**
   * The answer for a job with no row the caller may see: 404 JOB_NOT_FOUND, or 410 JOB_LOST for one the record lost
   * (lost_jobs: accepted, then its row dropped by a failover to an asynchronous standby). A lost job has no owner on
   * record (its queue entry carries none), so any key that presents the id is told it was lost: the id is a UUIDv7
   * with 74 random bits that only its submitter was given, and the answer says nothing of the job but that and when.
   */
  async function notFound(id: string): Promise<AppError> {
    const lost = await findLostJob(deps.pool, id);
    return lost ? jobLostError(lost) : new AppError('JOB_NOT_FOUND', `job ${id} does not exist`);
  }

  /** `inputBytes`: with the inline inputs' bytes, which only a download or a retry reads; a view shows the inputs' descriptions. */
  async function findJobRow(id: string, ownerKeyId: string | null, inputBytes = false): Promise<JobRecord> {
    const job = await findJob(deps.pool, id, ownerKeyId, { inputBytes });
    if (!job) throw await notFound(id);
    return job;
  }

  /** Every read of a job's data comes through here: a tombstone is 410 JOB_PURGED. */
  async function findOwnJob(id: string, ownerKeyId: string | null, inputBytes = false): Promise<JobRecord> {
    const job = await findJobRow(id, ownerKeyId, inputBytes);
    if (job.purgedAt) throw jobPurgedError(job);
    return job;
  }

  /**
   * Records and queues one job; undefined when an equal idempotency key won the insert. `waiting`: the model's backlog
   * it was admitted at, which decides whether its queue entry carries its inputs: `inHand`, its inputs with the bytes
   * the request holds (withBytesInHand), else the inline ones alone.
   */
  async function accept(
    job: NewJob,
    queue: { waiting: number | undefined; traceContext?: Record<string, string>; weight?: number; inHand?: StoredTensor[] },
  ): Promise<JobAccepted | undefined> {
    const candidate = queue.inHand ?? job.inputs;
    const carry = carriesInputs(candidate, queue.waiting, deps.limits.carriedInputsBytes ?? 0) ? candidate : undefined;
    if (!(await intake.accept(job, { traceContext: queue.traceContext, weight: queue.weight, carry }))) return undefined;
    return { id: job.id, status: 'queued', links: jobLinks(job.id) };
  }

  /** The job an earlier request under the caller's Idempotency-Key created: every replay's one read of it. */
  async function findKeyedJob(input: Pick<SubmitJobInput, 'principal' | 'idempotencyKey'>): Promise<JobRecord | undefined> {
    if (!input.idempotencyKey) return undefined;
    return findJobByIdempotencyKey(deps.pool, input.principal.keyId, input.idempotencyKey);
  }

  /** A replay's answer: the earlier job, or IDEMPOTENCY_CONFLICT when its key came with another request (`hash`). */
  function answerReplay(earlier: JobRecord, hash: string | null): JobAccepted {
    if (earlier.requestHash !== hash) throw new AppError('IDEMPOTENCY_CONFLICT', 'this Idempotency-Key was used with a different request');
    return { id: earlier.id, status: earlier.status, links: jobLinks(earlier.id) };
  }

  async function findIdempotent(input: Pick<SubmitJobInput, 'principal' | 'idempotencyKey'>, hash: string | null): Promise<JobAccepted | undefined> {
    const earlier = await findKeyedJob(input);
    return earlier && answerReplay(earlier, hash);
  }

  /** The submit's checks that need no input bytes; answers the model it routes to. */
  async function checkRequest(input: Omit<SubmitCheck, 'inputs' | 'idempotencyKey'>) {
    parseDeadline(input.deadline);
    if (input.webhookUrl !== undefined) await checkWebhookUrl(input.webhookUrl, deps.webhookAllowPrivate);
    return deps.models.routeModel(input.model, { routingKey: input.routingKey });
  }

  async function submitInSlot(input: SubmitJobInput & { slot: JobSlot }): Promise<JobAccepted> {
    const hashOf = (tensors: readonly DecodedInput[]): string | null =>
      input.idempotencyKey === undefined
        ? null
        : hashRequest([input.model, input.priority, input.metadata, input.deadline ?? null, input.webhookUrl ?? null], storage.requestDigests(tensors), {
            keepInputs: input.keepInputs,
          });
    // A replay is answered before the model is looked at (it may have been retired since), and its inputs are decoded
    // for the hash only once the key is known to be taken.
    const earlier = input.mayBeReplay !== false ? await findKeyedJob(input) : undefined;
    if (earlier) return answerReplay(earlier, hashOf(decodeInputs(input.inputs, deps.limits.inputMaxBytes)));
    const deadlineAt = parseDeadline(input.deadline);
    const model = await checkRequest(input);
    const tensors = decodeInputs(input.inputs, deps.limits.inputMaxBytes, model.signature);
    const hash = hashOf(tensors);
    const slot = input.slot;
    const id = slot.jobId;
    const job = {
      id,
      ownerKeyId: input.principal.keyId,
      modelName: model.name,
      modelVersion: model.version,
      priority: input.priority,
      idempotencyKey: input.idempotencyKey ?? null,
      requestHash: hash,
      metadata: input.metadata,
      deadlineAt,
      webhookUrl: input.webhookUrl ?? null,
      keepInputs: input.keepInputs ?? false,
    };
    const store = () => storage.store(input.principal, slot, tensors);
    // A job that keeps its inputs stores its own, even on a cache hit: the source's may be dropped before it.
    // Uploads are claimed first when the cache needs their digest.
    const early = job.keepInputs || (model.responseCache && tensors.some((t) => 'upload' in t && t.upload !== undefined));
    let inputs = early ? await store() : undefined;
    const inputSha256 = model.responseCache ? hashInputs(await storage.contentDigests(tensors, inputs)) : null;
    if (inputSha256 !== null) {
      // A hit queues nothing, so it is answered even when the backlog is full.
      const hit = await insertCachedJob(deps.pool, { ...job, inputSha256, inputs });
      deps.onCacheLookup?.(model.name, hit);
      if (hit) return { id, status: 'succeeded', links: jobLinks(id) };
    }
    const waiting = await backlog.admit(model.name);
    inputs ??= await store();
    const accepted = await accept(
      { ...job, inputSha256, inputs },
      { waiting, traceContext: input.traceContext, weight: input.principal.weight, inHand: withBytesInHand(inputs, tensors) },
    );
    // Lost a race with a concurrent request carrying the same key: answer with the winner.
    return accepted ?? (await findIdempotent(input, hash))!;
  }

  return {
    async checkSubmit(input) {
      if (await findKeyedJob(input)) return;
      const model = await checkRequest(input);
      checkInputHeads(input.inputs, deps.limits.inputMaxBytes, model.signature);
    },
    async submitJob(input) {
      const slot = input.slot ?? newJobSlot();
      let recorded = false;
      try {
        const accepted = await submitInSlot({ ...input, slot });
        recorded = accepted.id === slot.jobId;
        return accepted;
      } finally {
        // Uploads it claimed are used only by a recorded job; a refused submit gives them back for the retry.
        await deps.uploads.settle(slot.jobId, recorded);
      }
    },
    async retryJob(id, principal, idempotencyKey) {
      // What the key is bound to: the job retried (the retry takes everything else from it).
      const keyed = idempotencyKey === undefined ? undefined : { principal, idempotencyKey };
      const requestHash = keyed ? `retry:${id}` : null;
      if (keyed) {
        const earlier = await findIdempotent(keyed, requestHash);
        if (earlier) return earlier;
      }
      const job = await findOwnJob(id, ownerFilter(principal), true);
      if (job.inputsDroppedAt) throw inputsDroppedError(job);
      // A retry is a new job: a retired version takes none (410 MODEL_VERSION_RETIRED).
      await deps.models.resolveModel(`${job.modelName}:${job.modelVersion}`);
      const waiting = await backlog.admit(job.modelName);
      const newId = newJobId();
      // The retry keeps the webhook but not the deadline, which was the first attempt's.
      // Inputs kept in S3 are copied: the new job must not depend on the old one's objects.
      const inputs = await deps.tensors.copyTensors({ jobId: newId, createdAt: new Date(), kind: 'inputs' }, job.inputs);
      const accepted = await accept(
        {
          id: newId,
          ownerKeyId: principal.keyId,
          modelName: job.modelName,
          modelVersion: job.modelVersion,
          priority: job.priority,
          idempotencyKey: idempotencyKey ?? null,
          requestHash,
          inputs,
          metadata: job.metadata,
          deadlineAt: null,
          webhookUrl: job.webhookUrl,
          // Run again, not answered from the cache (a retry asks for a fresh run), but it may answer later jobs.
          inputSha256: job.inputSha256,
          keepInputs: job.keepInputs,
        },
        { waiting, weight: principal.weight },
      );
      // Lost a race with a concurrent retry under the same key: answer with the winner.
      return accepted ?? (await findIdempotent(keyed!, requestHash))!;
    },
    async openTensor(id, ownerKeyId, kind, index) {
      const job = await findOwnJob(id, ownerKeyId, kind === 'inputs');
      if (kind === 'inputs' && job.inputsDroppedAt) throw inputsDroppedError(job);
      const tensor = (kind === 'inputs' ? job.inputs : (job.outputs ?? []))[index];
      if (!tensor) throw new AppError('OUTPUT_NOT_FOUND', `job ${id} has no ${kind.slice(0, -1)} ${index}`);
      return { tensor, body: await deps.tensors.readTensorStream(tensor) };
    },
    async getJob(id, ownerKeyId) {
      if (!deps.views) return findOwnJob(id, ownerKeyId);
      // Any owner's view is kept, and the owner checked here: one entry serves the key and an admin alike.
      const job = await deps.views.get(id, () => findJob(deps.pool, id, null));
      if (!job) throw await notFound(id);
      if (ownerKeyId !== null && job.ownerKeyId !== ownerKeyId) throw new AppError('JOB_NOT_FOUND', `job ${id} does not exist`);
      if (job.purgedAt) throw jobPurgedError(job);
      return job;
    },
    forgetJobs: (ids) => deps.views?.forget(ids),
    findJobRow,
    async listJobs(q, ownerKeyId) {
      const limit = q.limit ?? 50;
      const { rows, coveredFrom } = await listJobs(deps.pool, {
        ...toJobFilter(q, ownerKeyId),
        limit: limit + 1,
        before: q.cursor ? decodeCursor(q.cursor) : undefined,
      });
      const items = rows.slice(0, limit);
      // A page that stopped short of the oldest job (its windows found too few) goes on before the time it covered.
      const next = rows.length > limit ? items[items.length - 1]! : coveredFrom ? { createdAt: coveredFrom, id: NIL_UUID } : null;
      return { items, nextCursor: next ? encodeCursor(next) : null };
    },
    async cancelJob(id, ownerKeyId) {
      const job = await cancelQueuedJob(deps.pool, id, ownerKeyId);
      if (!job) throw await notFound(id);
      deps.views?.forget([id]);
      if (job.purgedAt) throw jobPurgedError(job);
      if (job.status !== 'canceled') throw new AppError('JOB_NOT_CANCELABLE', `job ${id} is ${job.status}`);
      await removeCanceledJobs(deps.producer, [job]);
      return job;
    },
  };
}

/**
 * The queue side of a cancel, after the rows say `canceled`: each job's
 * BullMQ entry is removed. Best effort: an entry left behind is skipped by the
 * worker, which sees the canceled row.
 */
export async function removeCanceledJobs(producer: JobProducer, jobs: ReadonlyArray<{ id: string; modelName: string }>): Promise<void> {
  await Promise.all(jobs.map((job) => producer.removeJob(job.modelName, job.id)));
}

/** The wire filter as the database's: the caller's scope first, then each narrowing. */
export function toJobFilter(q: JobFilterQuery, ownerKeyId: string | null): JobFilter {
  return {
    ownerKeyId,
    keyId: q.keyId,
    status: q.status,
    modelName: q.model,
    priority: q.priority,
    createdAfter: q.createdAfter ? new Date(q.createdAfter) : undefined,
    createdBefore: q.createdBefore ? new Date(q.createdBefore) : undefined,
    idPrefix: q.id,
    errorCode: q.errorCode,
    errorText: q.errorText,
    bulkBatchId: q.batch,
  };
}
