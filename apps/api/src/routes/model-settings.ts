import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ModelRoutingParamsSchema, ModelSettingsBodySchema, ModelSettingsSchema, problemResponses } from '@inferq/contracts';
import { auditActor } from '../plugins/auth.ts';
import type { ModelSettingsService } from '../services/models/model-settings-service.ts';

// Settings of a model name that are not per version (its retention), apart
// from the version routes in models.ts.

export const modelSettingsRoutes: FastifyPluginAsyncTypebox<{ settings: ModelSettingsService }> = async (app, { settings }) => {
  app.patch(
    '/v1/models/:name',
    {
      config: { scope: 'models:write' },
      schema: {
        tags: ['models'],
        summary: "Change a model's settings (its job retention)",
        description:
          '`retentionS`: seconds a finished job of this model, any version, is kept before it is purged to a tombstone (at least 60); ' +
          "it wins over the owning key's retention. null clears it. Applies to jobs already finished too, and to versions uploaded later. " +
          'Audited as `model:retention-set`.',
        params: ModelRoutingParamsSchema,
        body: ModelSettingsBodySchema,
        response: { 200: ModelSettingsSchema, ...problemResponses(400, 401, 403, 404, 415) },
      },
    },
    async (request) => {
      const saved = await settings.setRetention(request.params.name, request.body.retentionS, auditActor(request));
      request.log.info({ model: saved.name, retentionS: saved.retentionS }, 'model retention set');
      return saved;
    },
  );
};
