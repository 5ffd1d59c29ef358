import type { Stack } from '@inferq/test-utils';
import type { TierCosts } from './costs/tier-costs.ts';
import type { WorkerRuntime } from './worker-entries.ts';

/** A goal from the issue's bar, checked against what the run measured. */
export interface Goal {
  name: string;
  /** e.g. `≥ 0.90`, `≤ 25 ms`. */
  target: string;
  value: number | null;
  met: boolean;
}

/** One line of a chart: y over x. */
export interface Series {
  name: string;
  points: Array<{ x: number; y: number }>;
}

export interface Chart {
  /** File name under the output folder, without extension. */
  file: string;
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
}

export interface ScenarioResult {
  id: string;
  title: string;
  /** Every figure measured, by name (units in the name: `items_per_s`, `p99_ms`). */
  metrics: Record<string, number | string | null>;
  goals: Goal[];
  /** Extra rows for the report (e.g. one per sweep setting). */
  table?: { columns: string[]; rows: Array<Array<string | number | null>> };
  charts?: Chart[];
  notes?: string[];
  /** What a job cost tier by tier in each measured run, the ceiling's run among them (report: one table per scenario). */
  costs?: CostRun[];
}

/** One measured run's tier costs, beside the throughput it measured. */
export interface CostRun {
  /** e.g. `e2e (JSON body)`, `raw onnxruntime`. */
  name: string;
  costs: TierCosts;
  measuredJobsPerS: number | null;
  /** The ceiling the other runs of the scenario are divided by. */
  ceiling?: boolean;
}

export interface BenchContext {
  /** Tiny counts: the CI smoke run, which only checks the suite still works. */
  smoke: boolean;
  /** Where scenario 1 runs the model, worker and raw loop alike: `cpu`, `cuda:N` or `webgpu:N`. */
  device: string;
  /** `full` normally, `smoke` in a smoke run. */
  size(full: number, smoke: number): number;
  /**
   * The real stack (API process, workers on demand) over fresh schema, prefix and bucket; `apiEnv`: extra API
   * settings; `services`: service URLs of the scenario's own (a Redis Cluster's `REDIS_URL`); `apiNodeArgs`: node flags
   * for the API process (`--cpu-prof`).
   */
  startStack(apiEnv?: Record<string, string>, services?: Record<string, string>, apiNodeArgs?: string[]): Promise<Stack>;
  /** What the stacks' workers run on (worker-entries.ts); absent, this process's Node with no flags. */
  workerRuntime?: WorkerRuntime;
  log(line: string): void;
}

export interface Scenario {
  id: string;
  title: string;
  run(ctx: BenchContext): Promise<ScenarioResult>;
}

export const goal = (name: string, value: number | null, op: '>=' | '<=', bound: number, unit = ''): Goal => ({
  name,
  target: `${op === '>=' ? '≥' : '≤'} ${bound}${unit ? ` ${unit}` : ''}`,
  value,
  met: value !== null && (op === '>=' ? value >= bound : value <= bound),
});
