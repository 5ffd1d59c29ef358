/**
 * libpq's connection URLs as far as inferq needs them: one host, or several
 * (`postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=read-write`), which
 * node-postgres cannot parse. Each host becomes a single-host URL that pg
 * reads as usual, with every other part (user, password, database, TLS,
 * options) kept.
 */

/** The libpq values inferq honours. `primary` is read-write's name since Postgres 14; the record needs one of the two, or `any`. */
const TARGETS = ['any', 'read-write', 'primary'] as const;
export type TargetSessionAttrs = (typeof TARGETS)[number];

export interface PostgresHost {
  host: string;
  port: number;
  /** A single-host URL for this host, as node-postgres reads it. */
  url: string;
}

export interface PostgresTargets {
  hosts: PostgresHost[];
  /** What the pool's connections must reach: `any` takes the first host that answers (libpq's default), `read-write` the first that takes writes. */
  targetSessionAttrs: TargetSessionAttrs;
}

export class PostgresUrlError extends Error {
  override name = 'PostgresUrlError';
}

const URL_SHAPE = /^(postgres(?:ql)?:\/\/)(?:([^@/?#]*)@)?([^/?#]*)(.*)$/;

/** One `host[:port]` of a host list; IPv6 addresses in brackets. */
function parseHost(item: string, whole: string): { host: string; port: number } {
  const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]]+)(?::(\d{1,5}))?$/.exec(item);
  if (!match) throw new PostgresUrlError(`DATABASE_URL: cannot read the host "${item}" in ${redact(whole)}`);
  const port = match[2] === undefined ? 5432 : Number(match[2]);
  if (port < 1 || port > 65_535) throw new PostgresUrlError(`DATABASE_URL: port ${port} is out of range in ${redact(whole)}`);
  return { host: match[1]!, port };
}

/** The URL with its password replaced by `***`, for messages. */
export function redact(url: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^:@/?#]*:)[^@/?#]*@/, '$1***@');
}

/** Splits a Postgres URL into its hosts; throws PostgresUrlError with the reason when it cannot be read. */
export function parsePostgresUrl(url: string): PostgresTargets {
  const shape = URL_SHAPE.exec(url);
  if (!shape) throw new PostgresUrlError(`DATABASE_URL must start with postgres:// or postgresql:// (got ${redact(url)})`);
  const [, scheme, userinfo, hostList, rest] = shape as unknown as [string, string, string | undefined, string, string];

  const queryStart = rest.indexOf('?');
  const params = new URLSearchParams(queryStart < 0 ? '' : rest.slice(queryStart + 1));
  const target = (params.get('target_session_attrs') ?? 'any') as TargetSessionAttrs;
  if (!TARGETS.includes(target)) {
    throw new PostgresUrlError(
      `DATABASE_URL: target_session_attrs=${target} is not supported: inferq writes its record, so use read-write (or primary), or any (got ${redact(url)})`,
    );
  }
  // libpq's own parameter: pg passes unknown ones to the server as startup options, so it is dropped here.
  params.delete('target_session_attrs');
  const query = params.size > 0 ? `?${params.toString()}` : '';
  const path = queryStart < 0 ? rest : rest.slice(0, queryStart);

  const items = hostList === '' ? [] : hostList.split(',');
  if (items.length === 0 && !params.has('host')) throw new PostgresUrlError(`DATABASE_URL names no host (got ${redact(url)})`);
  const credentials = userinfo === undefined ? '' : `${userinfo}@`;
  const hosts = items.map((item) => {
    const { host, port } = parseHost(item, url);
    return { host: host.replace(/^\[(.*)\]$/, '$1'), port, url: `${scheme}${credentials}${host}:${port}${path}${query}` };
  });
  // A host in the query (`?host=/run/postgresql`, a socket) is pg's own to read: one target, the URL as given.
  if (hosts.length === 0) {
    return {
      hosts: [{ host: params.get('host')!, port: Number(params.get('port') ?? 5432), url: `${scheme}${credentials}${path}${query}` }],
      targetSessionAttrs: target,
    };
  }
  return { hosts, targetSessionAttrs: target };
}
