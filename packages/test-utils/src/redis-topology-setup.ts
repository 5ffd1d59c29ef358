import type { TestProject } from 'vitest/node';
import { startRedisCluster, startRedisSentinel } from './redis-topologies.ts';
import { TEST_REDIS_TOPOLOGY_VAR, topologyUrlVar } from './test-env.ts';

const START = { cluster: startRedisCluster, sentinel: startRedisSentinel } as const;

/**
 * Global setup of a vitest project that runs its files on a Redis Cluster or
 * Sentinel group (its `env` names which): starts one for the project's run and
 * publishes its URL, which test contexts then use as REDIS_URL.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const topology = project.config.env?.[TEST_REDIS_TOPOLOGY_VAR] as keyof typeof START | undefined;
  if (topology === undefined) return async () => {};
  if (!(topology in START)) throw new Error(`${TEST_REDIS_TOPOLOGY_VAR} must be one of ${Object.keys(START).join(', ')}: ${topology}`);
  const servers = await START[topology]();
  process.env[topologyUrlVar(topology)] = servers.url;
  console.log(`[test services] Redis ${topology} for project ${project.name}: ${servers.url}`);
  return () => servers.close();
}
