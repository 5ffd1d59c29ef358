import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { EmbeddingsBodySchema, SubmitJobBodySchema, type BatchEndpoint, type EmbeddingsBody, type SubmitJobBody } from '@inferq/contracts';
import type { JobRecord } from '@inferq/db';
import type { TensorStore } from '@inferq/storage';
import type { Principal } from '../services/keys/api-keys-service.ts';
import type { EmbeddingPlan, EmbeddingsService } from '../services/protocols/embeddings-service.ts';
import { toJobDetail } from '../services/jobs/view/job-view.ts';
import { newJobSlot, type SubmitJobInput } from '../services/jobs/jobs-service.ts';
import { submitTensors } from '../services/jobs/intake/submit-body.ts';
import { outputReader } from '../services/jobs/submit-and-wait.ts';

// What a batch line's `url` does, one handler per endpoint: the body it takes,
// the jobs a line becomes, and the response body once they have succeeded.
// The runner and the output writer know nothing else of an endpoint.

interface BatchLineRequest {
  batchId: string;
  line: number;
  customId: string;
  principal: Principal;
}

export interface BatchEndpointHandler {
  /** Why `body` is not one this endpoint takes (`<path> <message>`), or undefined when it is. */
  check(body: unknown): string | undefined;
  /**
   * The line's jobs, in the `batch` class (below every interactive one; a line's own `priority` is not used), each
   * under an Idempotency-Key of the batch, line and index (a line submitted again gets the same jobs), with what
   * answering the line takes. Throws the AppError the endpoint answers a bad request with.
   */
  plan(request: BatchLineRequest, body: unknown): Promise<{ jobs: SubmitJobInput[]; answer: unknown }>;
  /** The line's response body, from its jobs (in order, all succeeded) and `answer`. */
  respond(answer: unknown, jobs: readonly JobRecord[]): Promise<unknown>;
}

export interface BatchEndpointDeps {
  embeddings: Pick<EmbeddingsService, 'plan' | 'answer'>;
  tensors: Pick<TensorStore, 'locateTensor' | 'readTensor'>;
  /** How long the URLs of outputs kept in object storage last in an output file. */
  outputUrlTtlS: number;
}

const ajv = new Ajv({ allErrors: false, useDefaults: true, strict: false });
addFormats.default(ajv);
const checker =
  (validate: ValidateFunction) =>
  (body: unknown): string | undefined => {
    if (validate(body)) return undefined;
    const first = validate.errors?.[0];
    return `body${first?.instancePath ?? ''} ${first?.message ?? 'is not valid'}`;
  };

/** What every job of a batch carries: the batch's own metadata keys, its priority, its key of batch, line and index. */
const batchJob = (r: BatchLineRequest, index: number) => ({
  metadata: { 'inferq.batch_id': r.batchId, 'inferq.custom_id': r.customId },
  priority: 'batch' as const,
  idempotencyKey: index === 0 ? `${r.batchId}:${r.line}` : `${r.batchId}:${r.line}:${index}`,
});

export function createBatchEndpoints(deps: BatchEndpointDeps): Record<BatchEndpoint, BatchEndpointHandler> {
  return {
    '/v1/jobs': {
      check: checker(ajv.compile(SubmitJobBodySchema)),
      async plan(r, raw) {
        const body = raw as SubmitJobBody;
        const job: SubmitJobInput = {
          principal: r.principal,
          model: body.model,
          inputs: submitTensors(body.inputs, undefined),
          slot: newJobSlot(),
          deadline: body.deadline,
          webhookUrl: body.webhook?.url,
          keepInputs: body.keepInputs,
          ...batchJob(r, 0),
          metadata: { ...body.metadata, ...batchJob(r, 0).metadata },
        };
        return { jobs: [job], answer: null };
      },
      respond: async (_answer, [job]) => toJobDetail(job!, deps.tensors, deps.outputUrlTtlS, 'json'),
    },

    '/v1/embeddings': {
      check: checker(ajv.compile(EmbeddingsBodySchema)),
      async plan(r, raw) {
        const { plan, jobs } = await deps.embeddings.plan({ principal: r.principal, body: raw as EmbeddingsBody });
        return { jobs: jobs.map((job, i) => ({ ...job, ...batchJob(r, i) })), answer: plan };
      },
      respond: (answer, jobs) =>
        deps.embeddings.answer(
          answer as EmbeddingPlan,
          jobs.map((job) => outputReader(job, deps.tensors)),
        ),
    },
  };
}
