import { describe, expect, it } from 'vitest';
import { parseRedisUrl, redact } from '../src/connection/redis-topology.ts';

describe('parseRedisUrl', () => {
  it('passes a single node URL to ioredis as it is', () => {
    expect(parseRedisUrl('redis://:pw@cache:6380/2')).toEqual({ kind: 'single', url: 'redis://:pw@cache:6380/2' });
    expect(parseRedisUrl('rediss://cache.example')).toEqual({ kind: 'single', url: 'rediss://cache.example' });
  });

  it('reads a Sentinel group: hosts with default port 26379, group, db, passwords', () => {
    expect(parseRedisUrl('redis+sentinel://app:s%40cret@s1,s2:26380,[::1]:26381/mymaster/3?sentinelPassword=sp')).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26380 },
        { host: '::1', port: 26381 },
      ],
      group: 'mymaster',
      db: 3,
      auth: { username: 'app', password: 's@cret' },
      sentinelPassword: 'sp',
      tls: false,
    });
  });

  it('reads a Cluster seed list with default port 6379 and TLS', () => {
    expect(parseRedisUrl('rediss+cluster://:pw@n1,n2:7001')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'n1', port: 6379 },
        { host: 'n2', port: 7001 },
      ],
      auth: { username: undefined, password: 'pw' },
      tls: true,
    });
  });

  it.each([
    ['http://cache:6379', /must start with redis/],
    ['redis+sentinel://s1:26379', /needs the group name/],
    ['redis+sentinel://s1:26379/mymaster/x', /not a database number/],
    ['redis+cluster://n1:6379/0', /one database/],
    ['redis+cluster://n1:99999', /port out of range/],
    ['redis+cluster://n1:,n2', /not a host\[:port\]/],
  ])('refuses %s with a message that says why', (url, message) => {
    expect(() => parseRedisUrl(url)).toThrow(message);
  });

  it('redacts passwords in messages', () => {
    expect(redact('redis+sentinel://app:secret@s1/m?sentinelPassword=sp')).toBe('redis+sentinel://app:***@s1/m?sentinelPassword=***');
    expect(() => parseRedisUrl('redis+cluster://:secret@n1/0')).toThrow(/:\*\*\*@/);
  });
});
