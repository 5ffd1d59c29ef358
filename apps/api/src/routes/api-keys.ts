import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiKeySchema, CreateKeyBodySchema, CreatedKeySchema, UpdateKeyBodySchema, problemResponses } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import { auditActor } from '../plugins/auth.ts';
import type { ApiKeyRecord, ApiKeysService } from '../services/keys/api-keys-service.ts';
import { assertRetentionFits } from '../services/jobs/retention-ceiling.ts';

const toApiKey = ({ secretHash: _h, ...key }: ApiKeyRecord) => key;

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ keys: ApiKeysService; retentionCeilingS?: number }> = async (app, { keys, retentionCeilingS }) => {
  app.post(
    '/v1/keys',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['keys'],
        summary: 'Create an API key (admin); the secret is shown once',
        body: CreateKeyBodySchema,
        response: { 201: CreatedKeySchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const { name, scopes = ['jobs:read', 'jobs:write'], rateLimitPerMin, weight } = request.body;
      const { record, secret } = await keys.createKey(name, scopes, { rateLimitPerMin, weight, actor: auditActor(request) });
      return reply.status(201).send({ ...toApiKey(record), secret });
    },
  );

  app.get(
    '/v1/keys',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['keys'],
        summary: 'List API keys (admin)',
        response: { 200: Type.Object({ items: Type.Array(ApiKeySchema) }, { examples: [{ items: ApiKeySchema.examples }] }), ...problemResponses(401, 403) },
      },
    },
    async () => ({ items: (await keys.listKeys()).map(toApiKey) }),
  );

  app.patch(
    '/v1/keys/:id',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['keys'],
        summary: "Change an API key's settings (admin)",
        description:
          '`retentionS`: seconds a finished job of this key is kept before it is purged to a tombstone (at least 60); null: ' +
          "the server's JOB_RETENTION_S. A model's own retention wins over it. Applies to jobs already finished too. Audited as `key:updated`.",
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        body: UpdateKeyBodySchema,
        response: { 200: ApiKeySchema, ...problemResponses(400, 401, 403, 404, 415) },
      },
    },
    async (request) => {
      assertRetentionFits(request.body.retentionS, retentionCeilingS);
      const record = await keys.updateKey(request.params.id, request.body, auditActor(request));
      if (!record) throw new AppError('NOT_FOUND', `no key ${request.params.id}`);
      return toApiKey(record);
    },
  );

  app.post(
    '/v1/keys/:id/revoke',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['keys'],
        summary: 'Revoke an API key (admin)',
        description:
          'The key authenticates nothing from then on. Its Batch API batches that have not ended are cancelled, as ' +
          '`POST /v1/batches/{id}/cancel` does: no more of their lines are submitted, their queued jobs are canceled, and they end ' +
          '`cancelled` with the lines not run in the error file. Jobs it submitted otherwise keep their course. ' +
          "Audited as `key:revoked`, with the batches' ids.",
        params: Type.Object({ id: Type.String({ format: 'uuid' }) }),
        response: { 200: ApiKeySchema, ...problemResponses(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const record = await keys.revokeKey(request.params.id, auditActor(request));
      if (!record) throw new AppError('NOT_FOUND', `no active key ${request.params.id}`);
      return toApiKey(record);
    },
  );
};
