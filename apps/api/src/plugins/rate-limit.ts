import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@inferq/core';
import { rateLimitNamespace, type RedisClient } from '@inferq/queue';
import type { Principal } from '../services/api-keys-service.ts';

export interface RateLimitOptions {
  redis: RedisClient;
  /** Prefix of the counters' Redis keys (the queue prefix, so deployments sharing a Redis stay apart). */
  keyPrefix: string;
  /** Requests per minute for keys without a limit of their own; 0: such keys are not limited. */
  defaultPerMin: number;
}

/**
 * Per-key request limits over a fixed one-minute window, counted in Redis so
 * every API process shares them (one script call per request). Registered
 * before the routes, it adds a route-level onRequest hook, which runs after
 * the instance-level auth hook: it counts only authenticated requests, by key
 * id, and public routes (no principal) pass uncounted. Over the limit: 429
 * RATE_LIMITED with Retry-After and the draft RateLimit-* headers.
 * If Redis is unreachable requests pass unlimited (skipOnError): reads keep
 * working, and submits already answer 503 QUEUE_UNAVAILABLE then.
 */
export async function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): Promise<void> {
  const principalOf = (request: FastifyRequest): Principal | undefined => request.principal;
  const limitOf = (principal: Principal): number => principal.rateLimitPerMin ?? options.defaultPerMin;
  await app.register(rateLimit, {
    redis: options.redis,
    nameSpace: rateLimitNamespace(options.keyPrefix),
    timeWindow: 60_000,
    keyGenerator: (request) => principalOf(request)?.keyId ?? '',
    allowList: (request) => {
      const principal = principalOf(request);
      return !principal || limitOf(principal) === 0;
    },
    max: (request) => limitOf(principalOf(request)!),
    skipOnError: true,
    enableDraftSpec: true,
    errorResponseBuilder: (_request, context) =>
      new AppError('RATE_LIMITED', `this key may make ${context.max} requests per minute; retry in ${context.after}`),
  });
}
