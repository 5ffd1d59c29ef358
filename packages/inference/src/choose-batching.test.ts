import { describe, expect, it } from 'vitest';
import { chooseBatching } from './choose-batching.ts';
import { InferenceProfile } from './inference-profile.ts';

/** A device where a batch costs `fixedMs` plus `perItemMs` per item, measured at these sizes. */
function profileOf(fixedMs: number, perItemMs: number, sizes: number[]): InferenceProfile {
  const p = new InferenceProfile();
  for (const items of sizes) for (let i = 0; i < 3; i++) p.record(items, fixedMs + perItemMs * items);
  return p;
}

describe('chooseBatching', () => {
  it('takes the bounds until anything is measured', () => {
    expect(chooseBatching(new InferenceProfile(), { maxBatchSize: 64, maxBatchDelayMs: 20, latencyTargetMs: 100 })).toMatchObject({
      maxBatchSize: 64,
      maxBatchDelayMs: 20,
      itemsPerS: null,
    });
  });

  it('grows the batch while the fixed cost still amortises, up to what the latency target allows', () => {
    // 10 ms per batch + 1 ms per item: throughput rises with size; 2 × t(b) ≤ 100 allows b ≤ 40.
    const choice = chooseBatching(profileOf(10, 1, [1, 2, 4, 8, 16, 32, 64]), { maxBatchSize: 64, maxBatchDelayMs: 50, latencyTargetMs: 100 });
    expect(choice.maxBatchSize).toBe(32);
    // What is left of the target after two runs of 42 ms.
    expect(choice.maxBatchDelayMs).toBeCloseTo(16, 6);
    expect(choice.reason).toMatch(/larger batches would break the 100 ms target/);
  });

  it('takes the largest size when the target allows every one, capping the delay at the bound', () => {
    const choice = chooseBatching(profileOf(10, 0.1, [1, 8, 64]), { maxBatchSize: 64, maxBatchDelayMs: 5, latencyTargetMs: 1_000 });
    expect(choice).toMatchObject({ maxBatchSize: 64, maxBatchDelayMs: 5 });
  });

  it('runs jobs one at a time with no delay when even one takes over half the target', () => {
    expect(chooseBatching(profileOf(80, 1, [1, 2]), { maxBatchSize: 16, maxBatchDelayMs: 10, latencyTargetMs: 100 })).toMatchObject({
      maxBatchSize: 1,
      maxBatchDelayMs: 0,
    });
  });

  it('explores upward from a single measured size, within the target', () => {
    // Only size 1 seen: time is taken as proportional (5 ms per item), every size ties; 2 × 5b ≤ 100 → b ≤ 10 → 8 of the candidates.
    const choice = chooseBatching(profileOf(0, 5, [1]), { maxBatchSize: 64, maxBatchDelayMs: 10, latencyTargetMs: 100 });
    expect(choice.maxBatchSize).toBe(8);
  });

  it("counts each batch's bookkeeping besides inference, so a larger batch wins where inference alone barely favours it", () => {
    // Inference 0.5 ms an item whatever the size (size 1 measured a shade faster), plus 4 ms a batch of claim and write.
    const p = new InferenceProfile();
    for (const items of [1, 8, 32]) for (let i = 0; i < 3; i++) p.record(items, items === 1 ? 0.45 : 0.5 * items, 0.5 * items + 4);
    const choice = chooseBatching(p, { maxBatchSize: 32, maxBatchDelayMs: 10, latencyTargetMs: 100 });
    expect(choice.maxBatchSize).toBe(32);
    expect(choice.itemsPerS).toBeCloseTo((32 * 1000) / (16 + 4), -1);
  });
});
