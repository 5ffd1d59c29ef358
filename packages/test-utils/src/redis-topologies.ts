import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { findFreePort, startRedisServer, type RunningRedis } from '@inferq/dev-stack';
import { waitFor } from './wait-for.ts';

// Real Redis Cluster and Sentinel groups from Debian's redis-server, on
// loopback ports of their own, for tests that run the pipeline on each
// topology and kill a primary under load.

/**
 * How long a node may be unreachable before the others fail it over (cluster-node-timeout, down-after-milliseconds):
 * 1 s for the tests; Redis's defaults are 15 s (Cluster) and 30 s (Sentinel), which the failover figures also give.
 */
const NODE_TIMEOUT_MS = 1_000;

export interface RedisTopologyOptions {
  /** @default 1000 */
  nodeTimeoutMs?: number;
}
const SLOTS = 16_384;

interface Node {
  port: number;
  dir: string;
  server: RunningRedis | undefined;
}

export interface RedisTopologyServers {
  /** REDIS_URL for this topology (redis+cluster:// or redis+sentinel://). */
  readonly url: string;
  /** Kills (SIGKILL: no shutdown, no persistence) the primary that owns `key` (any key for Sentinel); returns its port. */
  killPrimary(key?: string): Promise<number>;
  /** Resolves once a replica has taken over from the killed primary and the topology answers writes again; returns ms since the kill. */
  waitForFailover(key?: string): Promise<number>;
  /** Starts every killed node again on its port; it rejoins as a replica. */
  restartKilled(): Promise<void>;
  close(): Promise<void>;
}

const PORT_ATTEMPTS = 3;

async function startNodes(
  count: number,
  kind: string,
  args: (port: number, dir: string) => string[],
  configFile?: (port: number, dir: string) => Promise<string>,
) {
  const root = await mkdtemp(join(tmpdir(), `inferq-${kind}-`));
  const nodes: Node[] = [];
  const launch = async (node: Node) => {
    node.server = await startRedisServer({
      dataDir: node.dir,
      port: node.port,
      args: args(node.port, node.dir),
      configFile: configFile && (await configFile(node.port, node.dir)),
    });
  };
  /**
   * The first start only: a port found free can be taken before redis binds it (an outgoing connection's local port,
   * or a Cluster node's bus port, port + 10000), so it tries another. A restart keeps its port: the others know it.
   */
  const launchOnSomePort = async (node: Node) => {
    for (let attempt = 1; ; attempt++) {
      try {
        return await launch(node);
      } catch (err) {
        if (attempt >= PORT_ATTEMPTS || !/address already in use/i.test((err as Error).message)) throw err;
        await rm(node.dir, { recursive: true, force: true }); // a Cluster node may have written nodes.conf for the old port
        node.port = await findFreePort();
      }
    }
  };
  for (let i = 0; i < count; i++) {
    const node: Node = { port: await findFreePort(), dir: join(root, String(i)), server: undefined };
    nodes.push(node);
  }
  await Promise.all(nodes.map(launchOnSomePort));
  return {
    nodes,
    launch,
    async close() {
      await Promise.all(nodes.map((n) => n.server?.stop()));
      await rm(root, { recursive: true, force: true });
    },
  };
}

const admin = (port: number): Redis => new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });

async function withAdmin<T>(port: number, run: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = admin(port);
  try {
    await redis.connect();
    return await run(redis);
  } finally {
    redis.disconnect();
  }
}

/** A Redis Cluster of three primaries and a replica each. */
export async function startRedisCluster(options: RedisTopologyOptions = {}): Promise<RedisTopologyServers> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? NODE_TIMEOUT_MS;
  const group = await startNodes(6, 'cluster', () => [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(nodeTimeoutMs),
  ]);
  const ports = group.nodes.map((n) => n.port);
  const [first, ...others] = ports as [number, ...number[]];
  await withAdmin(first, async (r) => {
    for (const port of others) await r.cluster('MEET', '127.0.0.1', port);
  });
  const perPrimary = Math.ceil(SLOTS / 3);
  for (let i = 0; i < 3; i++) {
    // ADDSLOTS with every slot, not ADDSLOTSRANGE: Redis before 7.0 has only the former.
    const slots = Array.from({ length: Math.min(SLOTS, (i + 1) * perPrimary) - i * perPrimary }, (_, k) => i * perPrimary + k);
    await withAdmin(ports[i]!, (r) => r.cluster('ADDSLOTS', ...slots));
  }
  const nodeId = (port: number) => withAdmin(port, (r) => r.cluster('MYID') as Promise<string>);
  await waitFor(async () => withAdmin(first, async (r) => ((await r.cluster('NODES')) as string).trim().split('\n').length === 6), {
    what: 'cluster nodes to meet',
  });
  for (let i = 0; i < 3; i++) {
    const primary = await nodeId(ports[i]!);
    await waitFor(async () => withAdmin(ports[i + 3]!, async (r) => ((await r.cluster('NODES')) as string).includes(primary)), {
      what: 'replica to see its primary',
    });
    await withAdmin(ports[i + 3]!, (r) => r.cluster('REPLICATE', primary));
  }
  // A replica that has not finished its first sync with its primary is never promoted (its data is too old to stand in
  // for it): a primary killed before then stays down. On a busy machine that sync came after the kill once, and the
  // Cluster did not fail over within 30 s. So every replica has synced before the topology is handed out.
  for (const port of ports.slice(3))
    await waitFor(async () => withAdmin(port, async (r) => (await r.info('replication')).includes('master_link_status:up')).catch(() => false), {
      timeoutMs: 30_000,
      what: `the replica on port ${port} to sync with its primary`,
    });
  const clusterOk = async (port: number) => withAdmin(port, async (r) => ((await r.cluster('INFO')) as string).includes('cluster_state:ok')).catch(() => false);
  await waitFor(async () => (await Promise.all(ports.map(clusterOk))).every(Boolean), { timeoutMs: 30_000, what: 'cluster_state:ok on every node' });

  const killed: Node[] = [];
  let killedAt = 0;
  const primaryOf = async (key: string, via: number): Promise<number> =>
    withAdmin(via, async (r) => {
      const slot = (await r.cluster('KEYSLOT', key)) as number;
      const range = (await r.cluster('SLOTS')).find(([lo, hi]) => slot >= lo && slot <= hi);
      if (!range?.[2]) throw new Error(`no node serves slot ${slot}`);
      return range[2][1];
    });
  const live = () => group.nodes.filter((n) => !killed.includes(n)).map((n) => n.port);
  return {
    url: `redis+cluster://${ports.map((p) => `127.0.0.1:${p}`).join(',')}`,
    async killPrimary(key = 'any') {
      const port = await primaryOf(key, first);
      const node = group.nodes.find((n) => n.port === port)!;
      killed.push(node);
      killedAt = Date.now();
      await node.server?.kill();
      node.server = undefined;
      return port;
    },
    async waitForFailover(key = 'any') {
      await waitFor(
        async () => {
          const via = live()[0]!;
          const port = await primaryOf(key, via).catch(() => undefined);
          return port !== undefined && !killed.some((n) => n.port === port) && (await clusterOk(via));
        },
        { timeoutMs: nodeTimeoutMs + 30_000, what: 'a replica to take over the killed primary' },
      );
      return Date.now() - killedAt;
    },
    async restartKilled() {
      for (const node of killed.splice(0)) await group.launch(node);
    },
    close: group.close,
  };
}

const SENTINEL_GROUP = 'inferq';

/** A primary, one replica and three Sentinels (quorum 2) watching them. */
export async function startRedisSentinel(options: RedisTopologyOptions = {}): Promise<RedisTopologyServers> {
  const nodeTimeoutMs = options.nodeTimeoutMs ?? NODE_TIMEOUT_MS;
  const data = await startNodes(2, 'sentinel-data', () => []);
  const [primary, replica] = data.nodes as [Node, Node];
  await withAdmin(replica.port, (r) => r.replicaof('127.0.0.1', primary.port));
  const sentinels = await startNodes(
    3,
    'sentinels',
    () => ['--sentinel'],
    async (_port, dir) => {
      await mkdir(dir, { recursive: true });
      const file = join(dir, 'sentinel.conf');
      const lines = [
        `sentinel monitor ${SENTINEL_GROUP} 127.0.0.1 ${primary.port} 2`,
        `sentinel down-after-milliseconds ${SENTINEL_GROUP} ${nodeTimeoutMs}`,
        `sentinel failover-timeout ${SENTINEL_GROUP} 10000`,
        `sentinel parallel-syncs ${SENTINEL_GROUP} 1`,
      ];
      await writeFile(file, `${lines.join('\n')}\n`);
      return file;
    },
  );
  const currentPrimary = () =>
    withAdmin(sentinels.nodes[0]!.port, async (r) => Number(((await r.call('SENTINEL', 'get-master-addr-by-name', SENTINEL_GROUP)) as [string, string])[1]));
  await waitFor(async () => withAdmin(replica.port, async (r) => (await r.info('replication')).includes('master_link_status:up')), {
    what: 'the replica to sync',
  });
  const killed: Node[] = [];
  let killedAt = 0;
  return {
    url: `redis+sentinel://${sentinels.nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}/${SENTINEL_GROUP}`,
    async killPrimary() {
      const port = await currentPrimary();
      const node = data.nodes.find((n) => n.port === port)!;
      killed.push(node);
      killedAt = Date.now();
      await node.server?.kill();
      node.server = undefined;
      return port;
    },
    async waitForFailover() {
      await waitFor(
        async () => {
          const port = await currentPrimary().catch(() => undefined);
          if (port === undefined || killed.some((n) => n.port === port)) return false;
          return withAdmin(port, async (r) => (await r.info('replication')).includes('role:master')).catch(() => false);
        },
        { timeoutMs: nodeTimeoutMs + 30_000, what: 'the Sentinels to promote the replica' },
      );
      return Date.now() - killedAt;
    },
    async restartKilled() {
      // A restarted primary comes back empty; the Sentinels turn it into a replica of the new primary.
      for (const node of killed.splice(0)) await data.launch(node);
    },
    async close() {
      await sentinels.close();
      await data.close();
    },
  };
}
