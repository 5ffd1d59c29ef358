// The configuration of each process of the group. Patroni's configuration is YAML; JSON is YAML too, so it is written
// with JSON.stringify and needs no YAML library.

export const POSTGRES_BIN = '/usr/lib/postgresql/15/bin';
export const PATRONI = '/usr/bin/patroni';
export const ETCD = '/usr/bin/etcd';
export const HAPROXY = '/usr/sbin/haproxy';
export const PSQL = `${POSTGRES_BIN}/psql`;

export interface NodeConfig {
  name: string;
  pgPort: number;
  restPort: number;
  dir: string;
  dataDir: string;
}

export interface ClusterSettings {
  scope: string;
  etcdPort: number;
  synchronous: boolean;
  ttl?: number;
  loopWait?: number;
  retryTimeout?: number;
}

/** Trust on loopback, replication included: the group listens on 127.0.0.1 only and is a test's own. */
const PG_HBA = ['local all all trust', 'local replication all trust', 'host all all 127.0.0.1/32 trust', 'host replication all 127.0.0.1/32 trust'];

export function patroniConfig(node: NodeConfig, cluster: ClusterSettings): string {
  const timings = {
    ...(cluster.ttl === undefined ? {} : { ttl: cluster.ttl }),
    ...(cluster.loopWait === undefined ? {} : { loop_wait: cluster.loopWait }),
    ...(cluster.retryTimeout === undefined ? {} : { retry_timeout: cluster.retryTimeout }),
  };
  const config = {
    scope: cluster.scope,
    namespace: '/inferq-test/',
    name: node.name,
    log: { level: 'INFO' },
    restapi: { listen: `127.0.0.1:${node.restPort}`, connect_address: `127.0.0.1:${node.restPort}` },
    etcd3: { hosts: [`127.0.0.1:${cluster.etcdPort}`] },
    bootstrap: {
      dcs: {
        ...timings,
        maximum_lag_on_failover: 1_048_576,
        synchronous_mode: cluster.synchronous,
        synchronous_mode_strict: false,
        postgresql: {
          use_pg_rewind: true,
          use_slots: true,
          // The same on every node (Patroni keeps them in the DCS).
          parameters: {
            wal_level: 'replica',
            hot_standby: 'on',
            max_connections: 200,
            max_wal_senders: 10,
            max_replication_slots: 10,
            max_prepared_transactions: 0,
            max_locks_per_transaction: 64,
            wal_log_hints: 'on',
            wal_keep_size: '64MB',
          },
        },
      },
      initdb: [{ encoding: 'UTF8' }, { locale: 'C' }, { auth: 'trust' }, 'no-sync'],
    },
    postgresql: {
      listen: `127.0.0.1:${node.pgPort}`,
      connect_address: `127.0.0.1:${node.pgPort}`,
      data_dir: node.dataDir,
      bin_dir: POSTGRES_BIN,
      pgpass: `${node.dir}/pgpass`,
      authentication: {
        superuser: { username: 'postgres', password: 'postgres' },
        replication: { username: 'postgres', password: 'postgres' },
        rewind: { username: 'postgres', password: 'postgres' },
      },
      // A base backup starts at once rather than after a spread checkpoint.
      basebackup: [{ checkpoint: 'fast' }],
      pg_hba: PG_HBA,
      parameters: {
        // Not the system Postgres's socket directory.
        unix_socket_directories: node.dir,
        shared_buffers: '16MB',
        // Files under the data directory, which close() deletes, rather than in /dev/shm, which a SIGKILL leaves behind.
        dynamic_shared_memory_type: 'mmap',
        logging_collector: 'off',
        log_line_prefix: '%m [%p] ',
        lc_messages: 'C',
      },
    },
    watchdog: { mode: 'off' },
    tags: { nofailover: false, noloadbalance: false, clonefrom: false, nosync: false },
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

export function etcdArgs(dir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    '--name=etcd0',
    `--data-dir=${dir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=etcd0=${peer}`,
    '--initial-cluster-state=new',
    '--initial-cluster-token=inferq-test',
    // No metrics or debug endpoints beyond the client port.
    '--enable-pprof=false',
  ];
}

/**
 * HAProxy sends each connection to the node whose Patroni answers `OPTIONS /primary` with 200. OPTIONS, not GET:
 * a GET health check makes Patroni log a traceback per probe (patroni/patroni#2278). A node that fails its check has
 * its sessions cut, so a client's connection to a demoted primary ends rather than hangs.
 */
export function haproxyConfig(port: number, nodes: NodeConfig[]): string {
  return [
    'global',
    '  maxconn 1000',
    'defaults',
    '  mode tcp',
    '  timeout connect 2s',
    '  timeout client 30m',
    '  timeout server 30m',
    '  timeout check 1s',
    'listen primary',
    `  bind 127.0.0.1:${port}`,
    '  option httpchk OPTIONS /primary',
    '  http-check expect status 200',
    '  default-server inter 500ms fastinter 250ms downinter 500ms fall 2 rise 1 on-marked-down shutdown-sessions',
    ...nodes.map((n) => `  server ${n.name} 127.0.0.1:${n.pgPort} maxconn 300 check port ${n.restPort}`),
    '',
  ].join('\n');
}
