import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { ApiKeySchema, CreateKeyBodySchema, CreatedKeySchema, problemResponses } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { ApiKeyRecord } from '@inferq/db';
import { auditActor } from '../plugins/auth.ts';
import type { ApiKeysService } from '../services/api-keys-service.ts';

const toApiKey = ({ secretHash: _h, ...key }: ApiKeyRecord) => key;

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ keys: ApiKeysService }> = async (app, { keys }) => {
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

  app.post(
    '/v1/keys/:id/revoke',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['keys'],
        summary: 'Revoke an API key (admin)',
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
