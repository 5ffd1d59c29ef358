import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Scope } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { ApiKeysService, Principal } from '../services/keys/api-keys-service.ts';
import type { AuditActor } from '../services/keys/audit-service.ts';

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal;
  }
  interface FastifyContextConfig {
    /** Scope a key needs for the route (`any`: any valid key); routes without one are public (health). */
    scope?: Scope | 'any';
  }
}

function readKey(request: FastifyRequest): string | undefined {
  const auth = request.headers.authorization;
  if (auth?.startsWith('Bearer ')) return auth.slice(7).trim();
  const header = request.headers['x-api-key'];
  return typeof header === 'string' ? header.trim() : undefined;
}

/** The caller of an authenticated request, as the audit log names it. */
export const auditActor = (request: FastifyRequest): AuditActor => ({ keyId: request.principal.keyId, requestId: request.id });

/** Every route that declares a scope needs a valid key holding it (admin holds all). */
export function registerAuth(app: FastifyInstance, keys: ApiKeysService): void {
  app.decorateRequest('principal', undefined as unknown as Principal);
  app.addHook('onRequest', async (request) => {
    const scope = request.routeOptions.config.scope;
    if (!scope) return;
    const key = readKey(request);
    if (!key) throw new AppError('UNAUTHENTICATED', 'send the API key as "Authorization: Bearer <key>"');
    const principal = await keys.authenticate(key);
    if (!principal) throw new AppError('UNAUTHENTICATED', 'the API key is not valid or was revoked');
    if (scope !== 'any' && !principal.isAdmin && !principal.scopes.includes(scope)) throw new AppError('FORBIDDEN', `this key lacks the "${scope}" scope`);
    request.principal = principal;
  });
}
