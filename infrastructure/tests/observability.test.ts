import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createExecutableFinder, PROMTOOL, resolveDebianBinary } from '@inferq/dev-stack';
import { createApiMetrics } from '../../apps/api/src/metrics/api-metrics.ts';
import { createWorkerMetrics } from '../../apps/worker/src/telemetry/worker-metrics.ts';

// The Prometheus config and alert rules pass promtool, and every inferq metric
// the rules and the Grafana dashboard query is one the API or a worker exports.

const run = promisify(execFile);
const dir = resolve(import.meta.dirname, '..');
const promtool = () => resolveDebianBinary(PROMTOOL, { findExecutable: createExecutableFinder(process.env.PATH), log: (line) => console.log(line) });

/** Names the processes export (collect() is not called: the dependencies are never touched). */
function exportedNames(): Set<string> {
  const api = createApiMetrics({} as never)
    .registry.getMetricsAsArray()
    .map((m) => m.name);
  const worker = createWorkerMetrics({ device: 'cpu', readGpu: async () => null })
    .registry.getMetricsAsArray()
    .map((m) => m.name);
  return new Set([...api, ...worker]);
}

/** inferq_* names in a query, without the suffixes Prometheus adds to histograms. */
const queriedNames = (text: string): string[] => [
  ...new Set([...text.matchAll(/\binferq_[a-z0-9_]+/g)].map(([name]) => name.replace(/_(bucket|sum|count)$/, ''))),
];

describe('observability config', () => {
  it('passes promtool: the scrape config and the alert rules', async () => {
    const bin = await promtool();
    const rules = await run(bin, ['check', 'rules', resolve(dir, 'prometheus/alerts.yml')]);
    expect(rules.stdout).toMatch(/SUCCESS: \d+ rules found/);
    await run(bin, ['check', 'config', resolve(dir, 'prometheus/prometheus.yml')]);
    // Unit tests of the rules: per-worker and per-sweep gauges (alerts.test.yml).
    const tests = await run(bin, ['test', 'rules', resolve(dir, 'prometheus/alerts.test.yml')]);
    expect(tests.stdout).toMatch(/SUCCESS/);
  }, 300_000);

  it('queries only metrics the API and workers export', async () => {
    const exported = exportedNames();
    const alerts = await readFile(resolve(dir, 'prometheus/alerts.yml'), 'utf8');
    const dashboard = JSON.parse(await readFile(resolve(dir, 'grafana/dashboards/inferq.json'), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const queried = queriedNames([alerts, ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))].join('\n'));
    expect(queried.length).toBeGreaterThan(10);
    expect(queried.filter((name) => !exported.has(name))).toEqual([]);
  });
});
