import { describe, expect, it } from 'vitest';
import { BatchesInFlight } from './batches-in-flight.ts';

describe('BatchesInFlight', () => {
  it('keeps the minimum until a batch has been measured', () => {
    expect(new BatchesInFlight({ min: 2, max: 16 }).target()).toBe(2);
  });

  it("covers a batch's whole way with batches on the device: a slow CPU batch wants 2, a fast GPU batch many", () => {
    const cpu = new BatchesInFlight({ min: 1, max: 16 });
    cpu.observe({ deviceMs: 30, aroundMs: 8 });
    expect(cpu.target()).toBe(2);
    const gpu = new BatchesInFlight({ min: 1, max: 16 });
    gpu.observe({ deviceMs: 1.22, aroundMs: 8 });
    expect(gpu.target()).toBe(8);
  });

  it("keeps one feeder's share when several feed the device, never below the minimum", () => {
    const four = new BatchesInFlight({ min: 1, max: 16, feeders: 4 });
    four.observe({ deviceMs: 1.22, aroundMs: 8 });
    // 8 batches keep the device fed; each of 4 feeders keeps 2.
    expect(four.target()).toBe(2);
    const many = new BatchesInFlight({ min: 2, max: 16, feeders: 16 });
    many.observe({ deviceMs: 1.22, aroundMs: 8 });
    expect(many.target()).toBe(2);
  });

  it('stays within its bounds, a zero device time included', () => {
    const b = new BatchesInFlight({ min: 2, max: 4 });
    b.observe({ deviceMs: 0, aroundMs: 20 });
    expect(b.target()).toBe(4);
    const slow = new BatchesInFlight({ min: 2, max: 4 });
    slow.observe({ deviceMs: 100, aroundMs: 0 });
    expect(slow.target()).toBe(2);
  });

  it('follows the latencies as they change, smoothed, and ignores a batch with a stage that is not a time', () => {
    const b = new BatchesInFlight({ min: 1, max: 16 });
    b.observe({ deviceMs: 10, aroundMs: 4 });
    expect(b.target()).toBe(2);
    b.observe({ deviceMs: 1, aroundMs: Number.NaN });
    expect(b.stages()).toEqual({ deviceMs: 10, aroundMs: 4 });
    // The device gets faster (a GPU warmed up, smaller batches): the target rises over a few batches, not at once.
    const seen: number[] = [];
    for (let i = 0; i < 30; i++) {
      b.observe({ deviceMs: 1, aroundMs: 4 });
      seen.push(b.target());
    }
    expect(seen[0]).toBeLessThan(seen.at(-1)!);
    expect(seen.at(-1)).toBe(5);
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);
  });

  it('refuses bounds that cannot hold', () => {
    expect(() => new BatchesInFlight({ min: 0, max: 4 })).toThrow(RangeError);
    expect(() => new BatchesInFlight({ min: 3, max: 2 })).toThrow(RangeError);
    expect(() => new BatchesInFlight({ min: 1, max: 2, feeders: 0 })).toThrow(RangeError);
  });
});
