import { describe, expect, it } from 'vitest';
import { parsePostgresUrl, PostgresUrlError, redact } from './postgres-url.ts';

describe('Postgres URLs, one host or several', () => {
  it('reads one host as pg does, any target by default', () => {
    const t = parsePostgresUrl('postgres://inferq:secret@db.internal:6432/inferq?sslmode=require');
    expect(t.targetSessionAttrs).toBe('any');
    expect(t.hosts).toEqual([{ host: 'db.internal', port: 6432, url: 'postgres://inferq:secret@db.internal:6432/inferq?sslmode=require' }]);
  });

  it('splits a host list into single-host URLs that keep every other part, and drops target_session_attrs', () => {
    const t = parsePostgresUrl('postgresql://u:p%40ss@10.0.0.1:5432,pg-b,[fd00::2]:5433/app?target_session_attrs=read-write&application_name=x');
    expect(t.targetSessionAttrs).toBe('read-write');
    expect(t.hosts.map((h) => [h.host, h.port])).toEqual([
      ['10.0.0.1', 5432],
      ['pg-b', 5432],
      ['fd00::2', 5433],
    ]);
    expect(t.hosts.map((h) => h.url)).toEqual([
      'postgresql://u:p%40ss@10.0.0.1:5432/app?application_name=x',
      'postgresql://u:p%40ss@pg-b:5432/app?application_name=x',
      'postgresql://u:p%40ss@[fd00::2]:5433/app?application_name=x',
    ]);
  });

  it('takes primary as read-write is called since Postgres 14, and a URL without a path or user', () => {
    const t = parsePostgresUrl('postgres://a:1,b:2?target_session_attrs=primary');
    expect(t.targetSessionAttrs).toBe('primary');
    expect(t.hosts.map((h) => h.url)).toEqual(['postgres://a:1', 'postgres://b:2']);
  });

  it('leaves a socket host in the query to pg', () => {
    const t = parsePostgresUrl('postgres:///inferq?host=/run/postgresql&target_session_attrs=read-write');
    expect(t.hosts).toEqual([{ host: '/run/postgresql', port: 5432, url: 'postgres:///inferq?host=%2Frun%2Fpostgresql' }]);
  });

  it.each([
    ['mysql://a/b', /must start with postgres/],
    ['postgres://u@/db', /names no host/],
    ['postgres://u@a:99999/db', /out of range/],
    ['postgres://u@a:x/db', /cannot read the host "a:x"/],
    ['postgres://u@a,b/db?target_session_attrs=standby', /standby is not supported/],
  ])('refuses %s with the reason', (url, reason) => {
    expect(() => parsePostgresUrl(url)).toThrow(PostgresUrlError);
    expect(() => parsePostgresUrl(url)).toThrow(reason);
  });

  it('never repeats a password in its messages', () => {
    expect(redact('postgres://u:hunter2@a:1,b:2/db')).toBe('postgres://u:***@a:1,b:2/db');
    expect(() => parsePostgresUrl('postgres://u:hunter2@a:x/db')).toThrow(/u:\*\*\*@/);
  });
});
