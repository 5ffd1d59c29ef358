import { describe, expect, it } from 'vitest';
import type { Usage } from '@inferq/contracts';
import { toUsageQuery, usageRows, usageTotalRow, usageViewFromSearchParams } from './usage-report.ts';

describe('usage report', () => {
  it('reads the view from the URL, falling back to the last 24 hours per key', () => {
    expect(usageViewFromSearchParams(new URLSearchParams('range=30d&groupBy=model'))).toEqual({ range: '30d', groupBy: 'model' });
    expect(usageViewFromSearchParams(new URLSearchParams('range=1y&groupBy=worker'))).toEqual({ range: '24h', groupBy: 'key' });
  });

  it('measures the range back from now and leaves its end to the API', () => {
    const now = Date.parse('2025-06-08T00:00:00Z');
    expect(toUsageQuery({ range: '7d', groupBy: 'key' }, now)).toEqual({ from: '2025-06-01T00:00:00.000Z', groupBy: 'key' });
  });

  it('labels keys by name (id beside) or short id, sorts by device time, and gives no share when nothing ran', () => {
    const keyId = '01a2056c-7ce5-7547-b22f-2ac1e5777b72';
    const usage: Usage = {
      from: '2025-06-01T00:00:00.000Z',
      to: '2025-06-02T00:00:00.000Z',
      groupBy: 'key',
      items: [
        { keyId, jobs: 1, items: 1, deviceMs: 0 },
        { keyId: 'x', keyName: 'named', jobs: 1, items: 1, deviceMs: 0 },
      ],
      total: { jobs: 2, items: 2, deviceMs: 0 },
    };
    expect(usageRows(usage).map((r) => [r.label, r.detail, r.share])).toEqual([
      ['01a2056c…7b72', undefined, 0],
      ['named', 'x', 0],
    ]);
    expect(usageTotalRow(usage)).toMatchObject({ label: 'Total', jobs: 2, share: 0 });
  });
});
