import { cpuMsPerMiB } from './costs/process-cpu.ts';
import type { BodyForm, JobsRun } from './driver.ts';
import { median, round } from './stats.ts';

/** One body form's saturating bursts (`jobs` each) against the raw ceiling: medians over the rounds. */
export function summariseBursts(runs: JobsRun[], jobs: number, rawItemsPerS: number) {
  const itemsPerS = median(runs.map((b) => b.jobsPerS));
  const medianRound = runs.find((b) => b.jobsPerS === itemsPerS)!;
  return {
    itemsPerS,
    ratio: itemsPerS / rawItemsPerS,
    submitPerS: median(runs.map((b) => jobs / b.submit.elapsedS)),
    cpuMsPerMiB: median(runs.map((b) => cpuMsPerMiB(b.apiCpuS, b.submit.bodyBytes) ?? Number.NaN)),
    cpuMsPerJob: median(runs.map((b) => (b.apiCpuS === null ? Number.NaN : (b.apiCpuS * 1000) / jobs))),
    bodyBytes: runs[0]!.submit.bodyBytes / jobs,
    batch: median(runs.map((b) => b.avgBatchSize ?? 0)),
    span: median(runs.map((b) => b.spanS)),
    failed: runs.reduce((n, b) => n + b.failed, 0),
    rounds: runs.map((b) => Math.round(b.jobsPerS)).join(' / '),
    costs: medianRound.costs,
  };
}
export type BurstFigures = ReturnType<typeof summariseBursts>;

/** A CPU figure rounded, or null where /proc had none (NaN). */
export const cpuFigure = (v: number, digits = 1): number | null => (Number.isNaN(v) ? null : round(v, digits));

export const BODY_TABLE_COLUMNS = ['model', 'body', 'bytes per job', 'submit jobs/s', 'API CPU ms per MiB', 'API CPU ms per job', 'e2e items/s', 'e2e ÷ raw'];

/** One row of scenario 1's table: a model's bursts in one body form. */
export const bodyTableRow = (model: string, form: BodyForm, f: BurstFigures): Array<string | number | null> => [
  model,
  form,
  Math.round(f.bodyBytes),
  round(f.submitPerS, 0),
  cpuFigure(f.cpuMsPerMiB),
  cpuFigure(f.cpuMsPerJob, 3),
  round(f.itemsPerS, f.itemsPerS < 100 ? 1 : 0),
  round(f.ratio, 3),
];
