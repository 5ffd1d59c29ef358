import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createScrapeReads } from './scrape-reads.ts';

const LIMIT_MS = 100;
const never = () => new Promise<never>(() => {});

/** One scrape: its text, and how long it took. */
async function scrape(registry: Registry): Promise<{ text: string; ms: number }> {
  const started = performance.now();
  const text = await registry.metrics();
  return { text, ms: performance.now() - started };
}

/** The sample lines of one metric (no HELP or TYPE). */
const samples = (text: string, name: string) => text.split('\n').filter((line) => line.startsWith(`${name}{`) || line.startsWith(`${name} `));

describe('scrape reads', () => {
  it('answers within the limit with a read that never ends: that gauge left out, its source down, the others served', async () => {
    const registry = new Registry();
    const reads = createScrapeReads(registry, { sources: ['postgres', 'redis'], limitMs: LIMIT_MS });
    reads.gauge({ name: 'hangs', help: 'h', source: 'postgres', read: never });
    reads.gauge({
      name: 'answers',
      help: 'h',
      labelNames: ['model'],
      source: 'redis',
      async read(values) {
        values.set({ model: 'mlp' }, 3);
      },
    });

    const { text, ms } = await scrape(registry);
    expect(ms).toBeLessThan(LIMIT_MS + 400);
    expect(samples(text, 'hangs')).toEqual([]);
    expect(samples(text, 'answers')).toEqual(['answers{model="mlp"} 3']);
    expect(samples(text, 'inferq_metrics_source_up')).toEqual(['inferq_metrics_source_up{source="postgres"} 0', 'inferq_metrics_source_up{source="redis"} 1']);
    expect(samples(text, 'inferq_scrape_read_failures_total')).toEqual([
      'inferq_scrape_read_failures_total{gauge="hangs",source="postgres",reason="timeout"} 1',
    ]);
  });

  it('serves no stale value: a gauge read before is empty while its read fails, and back once it succeeds', async () => {
    const registry = new Registry();
    const reads = createScrapeReads(registry, { sources: ['redis'], limitMs: LIMIT_MS });
    let fail = false;
    reads.gauge({
      name: 'depth',
      help: 'h',
      labelNames: ['model'],
      source: 'redis',
      async read(values) {
        if (fail) throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });
        values.set({ model: 'mlp' }, 7);
      },
    });

    expect(samples((await scrape(registry)).text, 'depth')).toEqual(['depth{model="mlp"} 7']);
    fail = true;
    const down = (await scrape(registry)).text;
    expect(samples(down, 'depth')).toEqual([]);
    expect(samples(down, 'inferq_metrics_source_up')).toEqual(['inferq_metrics_source_up{source="redis"} 0']);
    expect(samples(down, 'inferq_scrape_read_failures_total')).toEqual(['inferq_scrape_read_failures_total{gauge="depth",source="redis",reason="error"} 1']);
    fail = false;
    const back = (await scrape(registry)).text;
    expect(samples(back, 'depth')).toEqual(['depth{model="mlp"} 7']);
    expect(samples(back, 'inferq_metrics_source_up')).toEqual(['inferq_metrics_source_up{source="redis"} 1']);
  });

  it('tells the failure as the source of the shared read that failed, not the gauge', async () => {
    const registry = new Registry();
    const reads = createScrapeReads(registry, { sources: ['postgres', 'redis'], limitMs: LIMIT_MS });
    reads.gauge({
      name: 'queue',
      help: 'h',
      source: 'redis',
      async read(values) {
        const models = await reads.read('postgres', never);
        values.set(models);
      },
    });

    const { text, ms } = await scrape(registry);
    expect(ms).toBeLessThan(LIMIT_MS + 400);
    expect(samples(text, 'inferq_scrape_read_failures_total')).toEqual([
      'inferq_scrape_read_failures_total{gauge="queue",source="postgres",reason="timeout"} 1',
    ]);
    expect(samples(text, 'inferq_metrics_source_up')).toEqual(['inferq_metrics_source_up{source="postgres"} 0', 'inferq_metrics_source_up{source="redis"} 1']);
  });

  it('holds every read of one scrape to one deadline: reads one after another do not add up', async () => {
    const registry = new Registry();
    const reads = createScrapeReads(registry, { sources: ['redis'], limitMs: LIMIT_MS });
    const slow = () => new Promise<number>((resolve) => setTimeout(() => resolve(1), LIMIT_MS * 0.6));
    reads.gauge({
      name: 'chained',
      help: 'h',
      source: 'redis',
      async read(values) {
        const a = await reads.read('redis', slow);
        const b = await reads.read('redis', slow);
        values.set(a + b);
      },
    });

    const { text, ms } = await scrape(registry);
    expect(ms).toBeLessThan(LIMIT_MS * 1.2 + 50);
    expect(samples(text, 'chained')).toEqual([]);
    expect(samples(text, 'inferq_scrape_read_failures_total')).toEqual([
      'inferq_scrape_read_failures_total{gauge="chained",source="redis",reason="timeout"} 1',
    ]);
  });
});
