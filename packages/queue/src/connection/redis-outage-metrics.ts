import { Counter, Gauge, Histogram, type Registry } from 'prom-client';
import type { RedisOutageOptions } from './redis-outage.ts';

/**
 * The Redis connection metrics an API or worker process serves, fed by
 * watchRedisOutages: whether each connection takes writes, its outages
 * (count and length: a failover's is the time from the primary's loss to the
 * new primary taking writes), and the errors it met by kind.
 */
export function createRedisOutageMetrics(registry: Registry): (connection: string) => Pick<RedisOutageOptions, 'onChange' | 'onError'> {
  const registers = [registry];
  const up = new Gauge({
    name: 'inferq_redis_up',
    help: '1 while the connection reaches a Redis primary that takes writes, 0 during an outage or failover',
    labelNames: ['connection'],
    registers,
  });
  const outages = new Counter({
    name: 'inferq_redis_outages_total',
    help: 'Outages and failovers of the Redis primary seen, by connection',
    labelNames: ['connection'],
    registers,
  });
  const outageSeconds = new Histogram({
    name: 'inferq_redis_outage_seconds',
    help: 'From the primary lost to writes accepted again, per outage',
    labelNames: ['connection'],
    buckets: [0.5, 1, 2, 3, 5, 10, 20, 30, 60, 120, 300],
    registers,
  });
  const errors = new Counter({
    name: 'inferq_redis_errors_total',
    help: 'Redis and BullMQ errors by kind (docs/operations.md: a failover, as the logs tell it)',
    labelNames: ['connection', 'kind'],
    registers,
  });
  return (connection) => {
    up.set({ connection }, 1);
    return {
      onChange(isUp, outageMs) {
        up.set({ connection }, isUp ? 1 : 0);
        if (!isUp) outages.inc({ connection });
        else if (outageMs !== undefined) outageSeconds.observe({ connection }, outageMs / 1000);
      },
      onError: (kind) => errors.inc({ connection, kind }),
    };
  };
}
