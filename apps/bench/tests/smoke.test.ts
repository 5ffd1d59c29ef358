import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startStack } from '@inferq/test-utils';
import { writeReport } from '../src/report.ts';
import { runScenarios } from '../src/run-scenarios.ts';
import { SCENARIOS } from '../src/scenarios/index.ts';

// The benchmark suite with tiny counts, so it never rots. No thresholds here:
// timings belong in the benchmark report, not in tests.
describe('benchmark suite (smoke)', () => {
  it('runs every scenario and writes the report', async () => {
    const ctx = {
      smoke: true,
      device: 'cpu',
      size: (_full: number, smoke: number) => smoke,
      startStack: (apiEnv?: Record<string, string>, services?: Record<string, string>, apiNodeArgs?: string[]) =>
        startStack({ logLevel: 'warn', apiEnv, services, apiNodeArgs }),
      log: () => {},
    };
    const results = await runScenarios(ctx, SCENARIOS);
    expect(results.map((r) => r.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', '11', '12', '13', '14', 'soak']);
    for (const r of results) expect(Object.keys(r.metrics).length).toBeGreaterThan(0);
    // Tier costs: scenarios 1 to 3 and their ceilings have them, every figure a number (none is checked against a bound).
    for (const r of results.filter((r) => ['1', '2', '3'].includes(r.id))) {
      expect(r.costs?.filter((c) => c.ceiling)).toHaveLength(1);
      for (const { costs, ceiling } of r.costs!) {
        expect(Number.isFinite(costs.fleetCpuUsPerJob)).toBe(true);
        expect(Number.isFinite(costs.predictedJobsPerS)).toBe(true);
        if (ceiling) continue;
        for (const figure of [costs.cpuUsPerJob.api, costs.redisCmdsPerJob, costs.pgTransactionsPerJob, costs.walBytesPerJob])
          expect(Number.isFinite(figure)).toBe(true);
        // Null only where the server is not a process on this machine.
        for (const figure of [costs.cpuUsPerJob.redis, costs.cpuUsPerJob.postgres]) expect(figure === null || Number.isFinite(figure)).toBe(true);
      }
    }
    const workerSide = results.find((r) => r.id === '1')!;
    expect(Number.isFinite(workerSide.metrics.worker_side_to_raw_ratio)).toBe(true);
    expect(workerSide.costs!.find((c) => c.name === 'worker side')!.costs.cpuUsPerJob['worker main']).not.toBeNull();
    const dir = await mkdtemp(join(tmpdir(), 'inferq-bench-'));
    const database = { relations: 400, catalogMiB: 2, state: 'fresh' as const };
    const machine = { cpu: 'test', cores: 1, memoryGiB: 1, os: 'test', node: process.version, onnxruntime: '-', redis: '-', postgres: '-', database };
    await writeReport(dir, { machine, startedAt: new Date().toISOString(), smoke: true, command: 'smoke', results });
    const readme = await readFile(join(dir, 'README.md'), 'utf8');
    expect(readme).toContain('## 6.');
    expect(readme).toContain('| worker main CPU µs/job |');
    expect(readme).toContain('Database when the run began: **fresh**');
    // Scenario 1's goals over its rounds: the median with the run-to-run range.
    expect(workerSide.goals.every((g) => g.value === null || g.runs !== undefined || g.name.includes('over its life'))).toBe(true);
  }, 900_000);
});
