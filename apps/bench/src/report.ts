import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { costTableMarkdown } from './costs/cost-table.ts';
import type { Machine } from './machine.ts';
import { goalFigure, goalVerdict, type ScenarioResult } from './scenario.ts';
import { renderLineChart } from './svg-chart.ts';

const cell = (v: unknown) => (v === null || v === undefined ? '—' : String(v));

function scenarioMarkdown(r: ScenarioResult): string {
  const lines = [`## ${r.id}. ${r.title}`, ''];
  if (r.goals.length > 0) {
    lines.push('| goal | target | measured (median, run-to-run range) | met |', '| --- | --- | --- | --- |');
    for (const g of r.goals) lines.push(`| ${g.name} | ${g.target} | ${goalFigure(g)} | ${g.met ? goalVerdict(g) : `**${goalVerdict(g)}**`} |`);
    lines.push('');
  }
  lines.push('| metric | value |', '| --- | --- |');
  for (const [k, v] of Object.entries(r.metrics)) lines.push(`| ${k} | ${cell(v)} |`);
  lines.push('');
  if (r.table) {
    lines.push(`| ${r.table.columns.join(' | ')} |`, `| ${r.table.columns.map(() => '---').join(' | ')} |`);
    for (const row of r.table.rows) lines.push(`| ${row.map(cell).join(' | ')} |`);
    lines.push('');
  }
  if (r.costs && r.costs.length > 0) lines.push("Cost per job, tier by tier (×: ÷ the ceiling's figure):", '', ...costTableMarkdown(r.costs));
  for (const c of r.charts ?? []) lines.push(`![${c.title}](${c.file}.svg)`, '');
  for (const n of r.notes ?? []) lines.push(`- ${n}`);
  return lines.join('\n');
}

/** results.json, README.md (tables, goals) and one SVG per chart, in `dir`. */
export async function writeReport(
  dir: string,
  run: { machine: Machine; startedAt: string; commit?: string; smoke: boolean; command: string; results: ScenarioResult[] },
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await writeFile(join(dir, 'results.json'), `${JSON.stringify(run, null, 2)}\n`);
  for (const chart of run.results.flatMap((r) => r.charts ?? [])) await writeFile(join(dir, `${chart.file}.svg`), renderLineChart(chart));
  const m = run.machine;
  const md = [
    '# Benchmarks',
    '',
    `Measured ${run.startedAt}${run.commit ? ` at commit ${run.commit}` : ''} with \`${run.command}\`` +
      (run.smoke ? ' (smoke run: tiny counts, figures mean nothing)' : '') +
      '.',
    '',
    `Machine: ${m.cpu}, ${m.cores} cores, ${m.memoryGiB} GiB; ${m.os}; Node ${m.node}, onnxruntime-node ` +
      `${m.onnxruntime}, Redis ${m.redis}, Postgres ${m.postgres}.`,
    '',
    `Database when the run began: **${m.database.state}** (${m.database.relations} relations; catalog ${m.database.catalogMiB} MiB on disk, ` +
      'pg_class, pg_attribute, pg_depend and pg_index with their dead rows). A long-used one (a catalog past 16 MiB: the schemas of ' +
      'many test runs made and dropped) plans and runs the same statements slower; compare figures across runs of the same state.',
    '',
    'Every scenario measures its own ceiling in the same run on the same machine and reports the ratio to it.',
    '',
    ...(run.results.some((r) => r.costs)
      ? [
          'Cost per job, tier by tier: CPU (user + system) from /proc read before and after each measured span, divided by its ' +
            'jobs. API and worker: their processes; worker main: the main thread (tid = pid), worker session: the busiest other ' +
            'thread (the session thread), worker other: the rest. Redis: the server process (INFO process_id). Postgres: every ' +
            "process of the cluster (the postmaster's, its live children's and its exited children's). Load generator: this " +
            'process. Redis commands from INFO commandstats deltas (INFO left out; the commands a Lua script runs count beside ' +
            'its EVALSHA); Postgres statements from pg_stat_statements ' +
            '(— when the server does not load it), transactions from pg_stat_database, WAL bytes from pg_current_wal_lsn. ' +
            'Shared servers count all clients. Predicted jobs/s: each API process one core, each worker main thread (with its ' +
            "other threads) one core and its session thread its intra-op thread count, Redis one, Postgres one; the lowest tier's figure.",
          '',
        ]
      : []),
    ...run.results.map(scenarioMarkdown),
  ].join('\n');
  await writeFile(join(dir, 'README.md'), `${md}\n`);
}
