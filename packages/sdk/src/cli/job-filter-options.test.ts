import { parseArgs } from 'node:util';
import { describe, expect, it } from 'vitest';
import { UsageError } from './config.ts';
import { JOB_FILTER_OPTIONS, jobFilterFromOptions, parseTimeOption } from './job-filter-options.ts';

const NOW = Date.parse('2025-06-02T12:00:00.000Z');
const KEY_ID = '5f0e8c2a-1b3d-4e5f-8a9b-0c1d2e3f4a5b';
const filterOf = (...args: string[]) => jobFilterFromOptions(parseArgs({ args, options: JOB_FILTER_OPTIONS }).values, NOW);

describe('job filter options', () => {
  it('turns every flag into the list query, and leaves out what is not given', () => {
    expect(
      filterOf(
        '--status=failed',
        '--model=mlp',
        '--priority=high',
        '--id=0190a1b2-7c',
        `--key-id=${KEY_ID}`,
        '--error-code=model_load_failed',
        '--error-text=out of memory',
        '--since=2h',
        '--until=2025-06-02T11:30:00Z',
      ),
    ).toEqual({
      status: 'failed',
      model: 'mlp',
      priority: 'high',
      id: '0190a1b2-7c',
      keyId: KEY_ID,
      errorCode: 'MODEL_LOAD_FAILED',
      errorText: 'out of memory',
      createdAfter: '2025-06-02T10:00:00.000Z',
      createdBefore: '2025-06-02T11:30:00.000Z',
    });
    expect(filterOf()).toEqual({});
  });

  it('reads --since and --until as an ISO time or as a duration back from now', () => {
    expect(parseTimeOption('since', '15m', NOW)).toBe('2025-06-02T11:45:00.000Z');
    expect(parseTimeOption('since', '90s', NOW)).toBe('2025-06-02T11:58:30.000Z');
    expect(parseTimeOption('since', '7d', NOW)).toBe('2025-05-26T12:00:00.000Z');
    expect(parseTimeOption('since', '2025-06-01T08:00:00+02:00', NOW)).toBe('2025-06-01T06:00:00.000Z');
    expect(() => parseTimeOption('since', '3 weeks', NOW)).toThrow(/--since must be an ISO time or a duration/);
  });

  it('refuses a malformed flag before any request, as a usage error', () => {
    for (const args of [
      ['--status=done'],
      ['--priority=urgent'],
      ['--id=xyz'],
      ['--key-id=alice'],
      ['--error-code=9BAD'],
      ['--error-text='],
      ['--since=1h', '--until=2h'],
      ['--until=yesterday'],
    ])
      expect(() => filterOf(...args), args.join(' ')).toThrow(UsageError);
  });
});
