/**
 * Spread into the options of every BullMQ Queue, Worker and QueueEvents this package builds, so the choice below is
 * made once.
 *
 * `skipVersionCheck`: without it, each BullMQ object's connection sends `INFO` when it starts, to refuse a Redis older
 * than 5.0 and to `console.warn` about an eviction policy other than `noeviction`. `INFO` is in Redis's `@dangerous`
 * ACL category, so a least-privilege user (REDIS_URL may name one, `redis://user:pw@…`; an ElastiCache RBAC user with
 * `-@dangerous`) is refused it, and every queue, consumer and event listener would fail to start. inferq reads the
 * eviction policy itself (`readMaxmemoryPolicy`: logged at start, reported by /healthz), and docker-compose.yml runs
 * Redis 7.
 *
 * What skipping costs: BullMQ then assumes Redis 5.0's abilities, so a consumer's blocking wait is rounded up to whole
 * seconds; on an otherwise idle queue, a job in retry backoff is taken up to a second after its delay ends (a job added
 * meanwhile still wakes the consumer at once).
 */
export const BULLMQ_OPTIONS = { skipVersionCheck: true } as const;
