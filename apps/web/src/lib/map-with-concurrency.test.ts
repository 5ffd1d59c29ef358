import { describe, expect, it } from 'vitest';
import { mapWithConcurrency } from './map-with-concurrency.ts';

describe('mapWithConcurrency', () => {
  it('keeps at most `limit` tasks in flight and returns results in index order', async () => {
    let inFlight = 0;
    let peak = 0;
    const results = await mapWithConcurrency(25, 4, async (i) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((resolve) => setTimeout(resolve, (i * 7) % 5));
      inFlight--;
      return i * 2;
    });
    expect(peak).toBe(4);
    expect(results.map((r) => (r.status === 'fulfilled' ? r.value : null))).toEqual(Array.from({ length: 25 }, (_, i) => i * 2));
  });

  it('settles failures without stopping the others', async () => {
    const results = await mapWithConcurrency(5, 2, async (i) => {
      if (i === 1) throw new Error('boom');
      return i;
    });
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
  });

  it('does nothing for zero tasks', async () => {
    expect(await mapWithConcurrency(0, 10, async () => 1)).toEqual([]);
  });
});
