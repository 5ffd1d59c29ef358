import { describe, expect, it } from 'vitest';
import {
  formatAdaptiveBatching,
  formatBatching,
  formatBytes,
  formatEmbedding,
  formatMs,
  formatPercent,
  formatRate,
  formatRelativeTime,
  formatSpan,
  shortId,
} from './format.ts';

describe('format', () => {
  it('formats durations with a unit, and null as a dash', () => {
    expect(formatMs(null)).toBe('—');
    expect(formatMs(0)).toBe('0 ms');
    expect(formatMs(0.25)).toBe('0.25 ms');
    expect(formatMs(12.34)).toBe('12.3 ms');
    expect(formatMs(1500)).toBe('1.50 s');
    expect(formatMs(90_000)).toBe('1.5 min');
    expect(formatMs(5_400_000)).toBe('1.5 h');
  });

  it('formats sizes in binary units', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(200 * 1024 * 1024)).toBe('200 MiB');
  });

  it('formats rates and percentages', () => {
    expect(formatRate(0.5)).toBe('0.50/s');
    expect(formatRate(123.4)).toBe('123/s');
    expect(formatPercent(0.125)).toBe('12.5%');
    expect(formatPercent(0.0005)).toBe('0.05%');
    expect(formatPercent(0)).toBe('0.0%');
  });

  it('shortens ids to their first and last characters', () => {
    expect(shortId('01a2056c-7ce5-7547-b22f-2ac1e5777b72')).toBe('01a2056c…7b72');
  });

  it('says how an embedding model pools, normalises, reads and limits', () => {
    expect(formatEmbedding({ pooling: 'mean', normalize: true, output: 'last_hidden_state', maxTokens: 128 })).toBe(
      'mean pooling, normalized, output last_hidden_state, ≤ 128 tokens',
    );
    expect(formatEmbedding({ pooling: 'none', normalize: false, output: 'pooled', maxTokens: 512 })).toBe(
      'pooled by the model, not normalized, output pooled, ≤ 512 tokens',
    );
  });

  it('says how a version batches: fixed numbers, or the bounds and latency target of auto', () => {
    expect(formatBatching(true, { maxBatchSize: 32, maxBatchDelayMs: 5, mode: 'fixed', latencyTargetMs: null })).toBe('up to 32 jobs, waits 5 ms');
    expect(formatBatching(true, { maxBatchSize: 64, maxBatchDelayMs: 20, mode: 'auto', latencyTargetMs: 250 })).toBe('auto ≤ 64 / ≤ 20 ms, p99 ≤ 250 ms');
    expect(formatBatching(true, { maxBatchSize: 64, maxBatchDelayMs: 20, mode: 'auto', latencyTargetMs: null })).toBe('auto ≤ 64 / ≤ 20 ms, p99 ≤ 100 ms');
    expect(formatBatching(false, { maxBatchSize: 1, maxBatchDelayMs: 0, mode: 'fixed', latencyTargetMs: null })).toBe('not batchable (one job per run)');
  });

  it('sums up what a worker chose for an auto model in one line', () => {
    const adaptive = { model: 'cnn', latencyTargetMs: 100, maxBatchSize: 32, maxBatchDelayMs: 4, itemsPerS: 2903.4, reason: 'best throughput', curve: [] };
    expect(formatAdaptiveBatching(adaptive)).toBe(`cnn: auto 32 / 4 ms, ${(2903).toLocaleString()} items/s`);
    expect(formatAdaptiveBatching({ ...adaptive, maxBatchDelayMs: 0.5, itemsPerS: 7.5 })).toBe('cnn: auto 32 / 0.50 ms, 7.50 items/s');
    expect(formatAdaptiveBatching({ ...adaptive, itemsPerS: null })).toBe('cnn: auto 32 / 4 ms, no batches measured yet');
  });

  it('formats times relative to now', () => {
    const now = Date.parse('2025-01-01T12:00:00Z');
    expect(formatRelativeTime('2025-01-01T12:00:00Z', now)).toBe('just now');
    expect(formatSpan('2025-01-01T12:00:00Z', '2025-01-08T12:01:00Z')).toBe('7 d');
    expect(formatSpan('2025-01-01T12:00:00Z', '2025-01-01T13:30:00Z')).toBe('1 h');
    expect(formatSpan('2025-01-01T12:00:00Z', '2025-01-01T12:00:30Z')).toBe('30 s');
    expect(formatSpan(null, '2025-01-01T12:00:30Z')).toBe('—');
    expect(formatRelativeTime('2025-01-01T11:59:50Z', now)).toBe('10 s ago');
    expect(formatRelativeTime('2025-01-01T11:57:00Z', now)).toBe('3 min ago');
    expect(formatRelativeTime('2024-12-30T12:00:00Z', now)).toBe('2 d ago');
    expect(formatRelativeTime('2025-01-01T14:00:00Z', now)).toBe('in 2 h');
  });
});
