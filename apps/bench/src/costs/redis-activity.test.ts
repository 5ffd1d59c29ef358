import { describe, expect, it } from 'vitest';
import { commandDeltas, parseCommandstats, parseRedisPid } from './redis-activity.ts';

const STATS = [
  '# Commandstats',
  'cmdstat_evalsha:calls=120,usec=900,usec_per_call=7.50,rejected_calls=0,failed_calls=0',
  'cmdstat_info:calls=7,usec=70,usec_per_call=10.00,rejected_calls=0,failed_calls=0',
  'cmdstat_client|setname:calls=3,usec=3,usec_per_call=1.00,rejected_calls=0,failed_calls=0',
  '',
].join('\r\n');

describe('INFO parsing', () => {
  it('reads calls per command, subcommands included', () => {
    expect(parseCommandstats(STATS)).toEqual(
      new Map([
        ['evalsha', 120],
        ['info', 7],
        ['client|setname', 3],
      ]),
    );
  });

  it('reads the server pid', () => {
    expect(parseRedisPid('# Server\r\nredis_version:7.0.15\r\nprocess_id:2213\r\n')).toBe(2213);
    expect(parseRedisPid('# Server\r\n')).toBeNull();
  });

  it('gives the calls between two readings, without INFO', () => {
    const before = parseCommandstats(STATS);
    const after = new Map([
      ['evalsha', 150],
      ['info', 9],
      ['client|setname', 3],
      ['hget', 4],
    ]);
    expect(commandDeltas(before, after)).toEqual(
      new Map([
        ['evalsha', 30],
        ['hget', 4],
      ]),
    );
  });
});
