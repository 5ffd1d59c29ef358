import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { JobParamsSchema, WebhookDeliveriesSchema, WebhookSecretSchema, problemResponses } from '@inferq/contracts';
import { ownerFilter } from '../services/keys/api-keys-service.ts';
import type { WebhooksService } from '../services/webhooks/webhooks-service.ts';

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (app, { webhooks }) => {
  app.get(
    '/v1/jobs/:id/webhook-deliveries',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['webhooks'],
        summary: "A job's webhook state and every delivery attempt",
        description:
          'Once the job finishes, its webhook is posted until a 2xx answer (`delivered`) or until the last ' +
          'attempt fails (`given_up`), with exponential backoff between attempts.',
        params: JobParamsSchema,
        response: { 200: WebhookDeliveriesSchema, ...problemResponses(400, 401, 403, 404, 410) },
      },
    },
    async (request) => webhooks.getDeliveries(request.params.id, ownerFilter(request.principal)),
  );

  app.get(
    '/v1/webhooks/secret',
    {
      config: { scope: 'jobs:read' },
      schema: {
        tags: ['webhooks'],
        summary: 'The secret that verifies webhook signatures for jobs this key submits',
        description:
          'Standard Webhooks format (`whsec_<base64>`): verify `webhook-signature` over ' +
          '`<webhook-id>.<webhook-timestamp>.<body>` with HMAC-SHA256 and the base64-decoded key. Each API key has its own.',
        response: { 200: WebhookSecretSchema, ...problemResponses(401, 403) },
      },
    },
    async (request) => ({ secret: webhooks.signingSecret(request.principal.keyId) }),
  );
};
