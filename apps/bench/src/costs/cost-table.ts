import type { CostRun } from '../scenario.ts';
import { TIERS, type Tier } from './tier-costs.ts';

const fixed = (v: number | null, digits: number) => (v === null || !Number.isFinite(v) ? '—' : v.toFixed(digits));

/** `value (×ratio)` where the ceiling has the figure too. */
const withRatio = (v: number | null, ceiling: number | null | undefined, digits: number) =>
  v !== null && ceiling != null && ceiling > 0 ? `${fixed(v, digits)} (×${(v / ceiling).toFixed(2)})` : fixed(v, digits);

/**
 * The scenario's tier costs as Markdown: a row per tier or figure, a column per run; a run's cell holds its ratio to the
 * ceiling run's figure where that has one. Then Redis's commands per job, by command, for each run.
 */
export function costTableMarkdown(runs: CostRun[]): string[] {
  const ceiling = runs.find((r) => r.ceiling);
  const row = (label: string, pick: (r: CostRun) => number | null, digits: number, ratio = true) =>
    `| ${label} | ${runs.map((r) => (ratio && !r.ceiling ? withRatio(pick(r), ceiling && pick(ceiling), digits) : fixed(pick(r), digits))).join(' | ')} |`;
  const tierRows = TIERS.filter((tier: Tier) => runs.some((r) => r.costs.cpuUsPerJob[tier] !== null)).map((tier) =>
    row(`${tier} CPU µs/job`, (r) => r.costs.cpuUsPerJob[tier], 1),
  );
  const lines = [
    `| per job | ${runs.map((r) => r.name + (r.ceiling ? ' (ceiling)' : '')).join(' | ')} |`,
    `| --- | ${runs.map(() => '---').join(' | ')} |`,
    ...tierRows,
    row('fleet CPU µs/job (API + worker + Redis + Postgres)', (r) => r.costs.fleetCpuUsPerJob, 1),
    row('Redis commands/job', (r) => r.costs.redisCmdsPerJob, 2),
    row('Postgres statements/job', (r) => r.costs.pgStatementsPerJob, 2),
    row('Postgres transactions/job', (r) => r.costs.pgTransactionsPerJob, 2),
    row('WAL bytes/job', (r) => r.costs.walBytesPerJob, 0),
    row('predicted jobs/s, each tier on its own cores', (r) => r.costs.predictedJobsPerS, 0),
    `| limiting tier | ${runs.map((r) => r.costs.limitingTier ?? '—').join(' | ')} |`,
    row('measured jobs/s', (r) => r.measuredJobsPerS, 0),
    '',
  ];
  const detail = runs
    .filter((r) => Object.keys(r.costs.redisCmdsPerJobByName).length > 0)
    .map(
      (r) =>
        `${r.name}: ${Object.entries(r.costs.redisCmdsPerJobByName)
          .map(([name, n]) => `${name} ${n.toFixed(2)}`)
          .join(', ')}`,
    );
  if (detail.length > 0) lines.push('Redis commands per job, by command:', '', ...detail.map((d) => `- ${d}`), '');
  return lines;
}
