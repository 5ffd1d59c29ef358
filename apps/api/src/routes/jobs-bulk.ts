import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BulkJobActionBodySchema, BulkJobActionResultSchema, problemResponses, RetryHeadersSchema } from '@inferq/contracts';
import { auditActor } from '../plugins/auth.ts';
import type { JobsBulkService } from '../services/jobs/jobs-bulk-service.ts';

const SCOPE_AND_BOUND =
  'The filter is the one `GET /v1/jobs` takes (no cursor or limit) and must name at least one field (400 `JOB_FILTER_EMPTY` otherwise). ' +
  "A key acts on its own jobs only; an admin key on every key's, or on one key's with `filter.keyId`. " +
  'At most `limit` jobs are acted on, oldest first; `truncated` says more matched, so call again for the rest. ' +
  '`dryRun: true` only counts `matched` and changes nothing (a console shows that count before asking to confirm).';

const CANCEL_DESCRIPTION =
  'Cancels every queued job matching the filter, in one statement, as `POST /v1/jobs/:id/cancel` does one: running and finished jobs ' +
  'are not matched, and a job a worker is starting at that moment is skipped. ' +
  SCOPE_AND_BOUND +
  ' Audited as `jobs:bulk-canceled` with the filter and the counts.';

const RETRY_DESCRIPTION =
  'Retries every failed, canceled or expired job matching the filter, as `POST /v1/jobs/:id/retry` does one: each becomes a new job owned ' +
  'by the caller; the old jobs stay as they were, so a second call retries them again — unless both carry the same `Idempotency-Key`: ' +
  'under one key each job is retried once, and a call sent again (after a timeout, say) answers the same counts and creates nothing. ' +
  'A retry refused (the model removed, its backlog full) ' +
  'is counted in `skipped`. ' +
  SCOPE_AND_BOUND +
  ' Audited as `jobs:bulk-retried` with the filter and the counts.';

/** An operator's cancel and retry of every job matching a filter. */
export const jobsBulkRoutes: FastifyPluginAsyncTypebox<{ bulk: JobsBulkService }> = async (app, { bulk }) => {
  app.post(
    '/v1/jobs/bulk-cancel',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Cancel the queued jobs matching a filter',
        description: CANCEL_DESCRIPTION,
        body: BulkJobActionBodySchema,
        response: { 200: BulkJobActionResultSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await bulk.cancelMatching(request.body, request.principal, auditActor(request));
      request.log.info({ ...result }, 'jobs bulk canceled');
      return result;
    },
  );

  app.post(
    '/v1/jobs/bulk-retry',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['jobs'],
        summary: 'Retry the failed, canceled and expired jobs matching a filter',
        description: RETRY_DESCRIPTION,
        headers: RetryHeadersSchema,
        body: BulkJobActionBodySchema,
        response: { 200: BulkJobActionResultSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => {
      const result = await bulk.retryMatching(request.body, request.principal, auditActor(request), request.headers['idempotency-key']);
      request.log.info({ ...result }, 'jobs bulk retried');
      return result;
    },
  );
};
