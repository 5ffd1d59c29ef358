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
      startStack: (apiEnv?: Record<string, string>) => startStack({ logLevel: 'warn', apiEnv }),
      log: () => {},
    };
    const results = await runScenarios(ctx, SCENARIOS);
    expect(results.map((r) => r.id)).toEqual(['1', '2', '3', '4', '5', '6', '7', '8', '9', '10', 'soak']);
    for (const r of results) expect(Object.keys(r.metrics).length).toBeGreaterThan(0);
    const dir = await mkdtemp(join(tmpdir(), 'inferq-bench-'));
    const machine = { cpu: 'test', cores: 1, memoryGiB: 1, os: 'test', node: process.version, onnxruntime: '-', redis: '-', postgres: '-' };
    await writeReport(dir, { machine, startedAt: new Date().toISOString(), smoke: true, command: 'smoke', results });
    expect(await readFile(join(dir, 'README.md'), 'utf8')).toContain('## 6.');
  }, 600_000);
});
