import rateLimit, { type FastifyRateLimitStore } from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@inferq/core';
import { createRequestCounter, rateLimitNamespace, type RedisClient, type RequestCounter } from '@inferq/queue';
import type { Principal } from '../services/keys/api-keys-service.ts';

export interface RateLimitOptions {
  redis: RedisClient;
  /** Prefix of the counters' Redis keys (the queue prefix, so deployments sharing a Redis stay apart). */
  keyPrefix: string;
  /** Requests per minute for keys without a limit of their own; 0: such keys are not limited. */
  defaultPerMin: number;
}

/**
 * Per-key request limits over a fixed one-minute window, counted in Redis so
 * every API process shares them (createRequestCounter: counted in the process
 * and added to Redis every 100 ms far from the limit, decided on Redis's count
 * near it; no Redis command of its own for most requests). Registered
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
  const counter = createRequestCounter(options.redis, { prefix: rateLimitNamespace(options.keyPrefix) });
  app.addHook('onClose', () => counter.close());
  await app.register(rateLimit, {
    store: sharedCounterStore(counter),
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

/** `@fastify/rate-limit`'s store interface over the shared counter; a route with its own limit counts under its method and URL. */
function sharedCounterStore(counter: RequestCounter, scope = '') {
  return class SharedCounterStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      counter.hit(scope + key, timeWindow, max).then(
        (result) => callback(null, result),
        (err: Error) => callback(err),
      );
    }
    read(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void): void {
      callback(null, counter.peek(scope + key));
    }
    child(params: unknown): FastifyRateLimitStore {
      const route = (params as { routeInfo?: { method?: unknown; url?: unknown } }).routeInfo ?? {};
      const Child = sharedCounterStore(counter, `${scope}${String(route.method ?? '')}${String(route.url ?? '')}-`);
      return new Child();
    }
  };
}
