import type { Stack } from '@inferq/test-utils';
import type { TierCosts } from './costs/tier-costs.ts';
import { median, round } from './stats.ts';
import type { WorkerRuntime } from './worker-entries.ts';

/** A goal from the issue's bar, checked against what the run measured. */
export interface Goal {
  name: string;
  /** e.g. `≥ 0.90`, `≤ 25 ms`. */
  target: string;
  /** The figure: the median where it was measured in several runs. */
  value: number | null;
  met: boolean;
  /** Where measured in several runs: their lowest and highest, and whether every run met the target (a robust meet). */
  runs?: { n: number; min: number; max: number; everyMet: boolean };
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

const meets = (value: number | null, op: '>=' | '<=', bound: number): boolean => value !== null && (op === '>=' ? value >= bound : value <= bound);

export const goal = (name: string, value: number | null, op: '>=' | '<=', bound: number, unit = ''): Goal => ({
  name,
  target: `${op === '>=' ? '≥' : '≤'} ${bound}${unit ? ` ${unit}` : ''}`,
  value,
  met: meets(value, op, bound),
});

/**
 * A goal read in several runs: its value their median (rounded to `digits`), beside the run-to-run range and whether
 * every run met it; null where a run's figure was not read.
 */
export function goalOverRuns(name: string, runs: ReadonlyArray<number | null>, op: '>=' | '<=', bound: number, unit = '', digits = 3): Goal {
  const values = runs.filter((v): v is number => v !== null);
  if (values.length === 0 || values.length < runs.length) return goal(name, null, op, bound, unit);
  const g = goal(name, round(median(values), digits), op, bound, unit);
  const [min, max] = [Math.min(...values), Math.max(...values)];
  return { ...g, runs: { n: values.length, min: round(min, digits)!, max: round(max, digits)!, everyMet: values.every((v) => meets(v, op, bound)) } };
}

/** How a goal stands, in words: met in every run, by the median only, or not. */
export function goalVerdict(g: Goal): string {
  if (!g.runs || g.runs.n < 2) return g.met ? 'met' : 'NOT MET';
  if (g.runs.everyMet) return `met in every run (${g.runs.n})`;
  return g.met ? `met by the median only (${g.runs.n} runs)` : `NOT MET (${g.runs.n} runs)`;
}

/** A goal's measured figure with its run-to-run range: `0.91 (0.88–0.95)`. */
export const goalFigure = (g: Goal): string => `${g.value === null ? '—' : g.value}${g.runs && g.runs.n > 1 ? ` (${g.runs.min}–${g.runs.max})` : ''}`;
