/**
 * What REDIS_URL names: one node, a Sentinel group or a Redis Cluster.
 *
 * - `redis://[user:password@]host[:port][/db]` (or `rediss://` for TLS): one node, as ioredis reads it.
 * - `redis+sentinel://[user:password@]h1[:26379],h2[:26379]/<group>[/db][?sentinelPassword=…]`: the group's primary
 *   as its Sentinels report it, followed through failovers.
 * - `redis+cluster://[user:password@]h1[:6379],h2[:6379]`: a Redis Cluster, from any of its nodes (a seed list).
 *
 * `rediss+sentinel://` and `rediss+cluster://` connect with TLS. The user and password are Redis's own (ACL).
 */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | { kind: 'sentinel'; sentinels: HostPort[]; group: string; db: number; auth: RedisAuth; sentinelPassword?: string; tls: boolean }
  | { kind: 'cluster'; nodes: HostPort[]; auth: RedisAuth; tls: boolean };

export interface HostPort {
  host: string;
  port: number;
}

export interface RedisAuth {
  username?: string;
  password?: string;
}

const SCHEME = /^(rediss?)(?:\+(sentinel|cluster))?:\/\/(.*)$/;
const DEFAULT_PORT = { sentinel: 26379, cluster: 6379 } as const;

export function parseRedisUrl(url: string): RedisTopology {
  const m = SCHEME.exec(url);
  if (!m) throw new RangeError(`REDIS_URL must start with redis://, rediss://, redis+sentinel:// or redis+cluster://: ${redact(url)}`);
  const [, scheme, mode, rest] = m as unknown as [string, string, 'sentinel' | 'cluster' | undefined, string];
  if (mode === undefined) return { kind: 'single', url };
  const tls = scheme === 'rediss';
  const [beforeQuery, query = ''] = splitOnce(rest, '?');
  const at = beforeQuery.lastIndexOf('@');
  const auth = at < 0 ? {} : parseAuth(beforeQuery.slice(0, at));
  const [hostList, path = ''] = splitOnce(beforeQuery.slice(at + 1), '/');
  const hosts = hostList.split(',').map((h) => parseHostPort(h, DEFAULT_PORT[mode], url));
  const params = new URLSearchParams(query);
  if (mode === 'cluster') {
    if (path !== '') throw new RangeError(`a Redis Cluster has one database and no group: drop "/${path}" from ${redact(url)}`);
    return { kind: 'cluster', nodes: hosts, auth, tls };
  }
  const [group = '', dbText = '0'] = path.split('/');
  if (group === '') throw new RangeError(`redis+sentinel:// needs the group name after the hosts (…:26379/mymaster): ${redact(url)}`);
  const db = Number(dbText);
  if (!Number.isInteger(db) || db < 0) throw new RangeError(`not a database number: "${dbText}" in ${redact(url)}`);
  const sentinelPassword = params.get('sentinelPassword') ?? undefined;
  return { kind: 'sentinel', sentinels: hosts, group: decodeURIComponent(group), db, auth, sentinelPassword, tls };
}

/** The URL with its passwords replaced, for logs and error messages. */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*:)[^@/]*@/, '//$1***@').replace(/(sentinelPassword=)[^&]*/, '$1***');
}

function splitOnce(s: string, sep: string): [string, string?] {
  const i = s.indexOf(sep);
  return i < 0 ? [s] : [s.slice(0, i), s.slice(i + 1)];
}

function parseAuth(userinfo: string): RedisAuth {
  const [user, password] = splitOnce(userinfo, ':');
  return { username: user === '' ? undefined : decodeURIComponent(user), password: password === undefined ? undefined : decodeURIComponent(password) };
}

function parseHostPort(text: string, defaultPort: number, url: string): HostPort {
  const m = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d+))?$/.exec(text.trim());
  if (!m) throw new RangeError(`not a host[:port]: "${text}" in ${redact(url)}`);
  const port = m[2] === undefined ? defaultPort : Number(m[2]);
  if (port < 1 || port > 65535) throw new RangeError(`port out of range: "${text}" in ${redact(url)}`);
  return { host: m[1]!.replace(/^\[(.*)\]$/, '$1'), port };
}
