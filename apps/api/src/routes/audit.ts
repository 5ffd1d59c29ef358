import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditListSchema, ListAuditQuerySchema, problemResponses } from '@inferq/contracts';
import type { AuditService } from '../services/keys/audit-service.ts';

export const auditRoutes: FastifyPluginAsyncTypebox<{ audit: AuditService }> = async (app, { audit }) => {
  app.get(
    '/v1/audit',
    {
      config: { scope: 'admin' },
      schema: {
        tags: ['audit'],
        summary: 'Read the audit log (admin), newest first',
        description: 'Every admin action: keys created and revoked, models uploaded. Cursor pagination: pass `nextCursor` back as `cursor` until it is null.',
        querystring: ListAuditQuerySchema,
        response: { 200: AuditListSchema, ...problemResponses(400, 401, 403) },
      },
    },
    async (request) => audit.listEntries(request.query),
  );
};
