import type {
  BulkBatch,
  Job,
  JobAccepted,
  Model,
  ModelRetention,
  ModelRetirement,
  QueueDepth,
  Stats,
  TensorSummary,
  Usage,
  WorkerStatus,
} from '@inferq/contracts';
import type { JobSummary } from '../jobs.ts';
import { formatRetention } from '../retention.ts';

const ms = (v: number | null) => (v === null ? '–' : `${Math.round(v * 10) / 10} ms`);
const kib = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024)} KiB`);
const shapeOf = (t: { datatype: string; shape: number[] }) => `${t.datatype}[${t.shape.join(',')}]`;

/** Auto models show their bounds and target: the size and delay in use are the worker's choice. */
const batchingOf = ({ mode, maxBatchSize, maxBatchDelayMs, latencyTargetMs }: Model['batching']): string =>
  mode === 'auto' ? `auto ≤${maxBatchSize}/≤${maxBatchDelayMs} ms, p99 target ${latencyTargetMs} ms` : `${maxBatchSize}/${maxBatchDelayMs} ms`;

const signatureOf = (m: Model): string =>
  m.signature.inputs.map((t) => `${t.name} ${t.datatype}[${t.shape.map((d) => (d === -1 ? '?' : d)).join(',')}]`).join(', ');

export const formatModel = (m: Model): string =>
  `${m.name}:${m.version}  ${signatureOf(m)}  batch ${batchingOf(m.batching)}${m.responseCache ? '  cached' : ''}  ${kib(m.sizeBytes)}` +
  (m.retiredAt ? `  retired ${m.retiredAt}` : '') +
  (m.retention ? `  kept ${formatRetention(m.retention.effectiveS)}${m.retention.source === 'default' ? ' (default)' : ''}` : '');

/** `mlp: jobs kept 2d (the model's own, set …)  inputs 1h`: how long a model name's finished jobs are kept. */
export function formatModelRetention(
  name: string,
  r: Pick<ModelRetention, 'effectiveS' | 'source' | 'inputRetentionS'> & { updatedAt?: string | null },
): string {
  const why =
    r.source === 'model' ? `the model's own${r.updatedAt ? `, set ${r.updatedAt}` : ''}` : "the server default; a key's own retention wins for its jobs";
  const inputs =
    r.inputRetentionS === null ? '' : `  inputs of succeeded jobs ${r.inputRetentionS === 0 ? 'dropped at once' : formatRetention(r.inputRetentionS)}`;
  return `${name}: jobs kept ${formatRetention(r.effectiveS)} (${why})${inputs}`;
}

export function formatJob(job: Job | JobAccepted): string[] {
  if (!('model' in job)) return [`${job.id}  ${job.status}`];
  const lines = [`${job.id}  ${job.status}  ${job.model}:${job.modelVersion}  ${job.priority}  created ${job.createdAt}`];
  if (job.finishedAt) lines.push(`  queue ${ms(job.queueMs)}  infer ${ms(job.inferMs)}  batch ${job.batchSize ?? '–'}  attempts ${job.attempts}`);
  if (job.error) lines.push(`  error ${job.error.code}: ${job.error.message}`);
  if (job.purgedAt) lines.push(`  purged ${job.purgedAt} (${job.purgeReason ?? 'retention'})`);
  if (job.inputsDroppedAt) lines.push(`  inputs dropped ${job.inputsDroppedAt}`);
  for (const o of job.outputs ?? []) lines.push(`  output ${o.name} ${shapeOf(o)} ${kib(o.bytes)}${o.url ? ' (url)' : ''}`);
  for (const i of job.inputs ?? ([] as TensorSummary[])) lines.push(`  input ${i.name} ${shapeOf(i)} ${kib(i.bytes)}`);
  return lines;
}

export function formatStats(s: Stats): string[] {
  const lines = [
    `workers ${s.workersOnline}  submitted ${s.submittedPerSec.toFixed(1)}/s  completed ${s.completedPerSec.toFixed(1)}/s  ` +
      `failed ${s.failedPerSec.toFixed(1)}/s  (scope ${s.scope})`,
    `last ${s.windowMinutes} min: queue p50 ${ms(s.queueMsP50)} p95 ${ms(s.queueMsP95)}  infer p50 ${ms(s.inferMsP50)} p95 ${ms(s.inferMsP95)}  ` +
      `batch ${s.avgBatchSize?.toFixed(1) ?? '–'}  errors ${(s.errorRate * 100).toFixed(1)}%`,
  ];
  for (const q of s.queues) lines.push(`  ${formatModelQueue(q)}`);
  return lines;
}

/** `retired mlp:1 (12 jobs still to finish)` per version, then the routing table left. */
export function formatModelRetirement(r: ModelRetirement): string[] {
  const lines = r.versions.map(
    (v) => `retired ${r.name}:${v.version} at ${v.retiredAt}${v.unfinishedJobs ? ` (${v.unfinishedJobs} queued or running jobs still to finish)` : ''}`,
  );
  lines.push(r.routing.length ? `routing ${r.routing.map((x) => `v${x.version}=${x.weight}`).join(' ')}` : 'no routing table');
  return lines;
}

/** One model queue: `mlp: paused  waiting 0/3/0/0 (high/normal/low/batch)  active 0  delayed 0  workers 1`. */
export const formatModelQueue = (q: QueueDepth): string =>
  `${q.model}: ${q.paused ? 'paused  ' : ''}waiting ${q.high}/${q.normal}/${q.low}/${q.batch} (high/normal/low/batch)  ` +
  `active ${q.active}  delayed ${q.delayed}  workers ${q.workers}`;

export const formatWorker = (w: WorkerStatus): string =>
  `${w.workerId}  ${w.device}  ${w.hostname}:${w.pid}  models ${w.modelsServed.join(',') || '–'}  jobs ${w.jobsSucceeded} ok / ${w.jobsFailed} failed`;

/** Summed device time in the largest unit that keeps it readable: ms, s, min, h. */
function formatDeviceTime(ms: number): string {
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** Columns padded to their widest cell; the first left-aligned, the figures right-aligned. */
function table(rows: string[][]): string[] {
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) =>
    row
      .map((cell, column) => (column === 0 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!)))
      .join('  ')
      .trimEnd(),
  );
}

type UsageRow = Usage['items'][number];
const usageLabel = (row: UsageRow): string =>
  row.model !== undefined ? `${row.model}:${row.modelVersion ?? '?'}` : row.keyName !== undefined ? `${row.keyName} (${row.keyId ?? '?'})` : (row.keyId ?? '?');

export function formatUsage(u: Usage): string[] {
  const share = (deviceMs: number) => (u.total.deviceMs > 0 ? `${((deviceMs / u.total.deviceMs) * 100).toFixed(1)}%` : '–');
  const figures = (f: Usage['total']) => [f.jobs.toLocaleString('en'), f.items.toLocaleString('en'), formatDeviceTime(f.deviceMs), share(f.deviceMs)];
  const header = `usage ${u.from} → ${u.to}, per ${u.groupBy}`;
  if (u.items.length === 0) return [header, 'no succeeded jobs in this range'];
  return [
    header,
    ...table([
      [u.groupBy === 'model' ? 'MODEL' : 'KEY', 'JOBS', 'ITEMS', 'DEVICE TIME', 'SHARE'],
      ...u.items.map((row) => [usageLabel(row), ...figures(row)]),
      ['total', ...figures(u.total)],
    ]),
  ];
}

/** One job of a list: `<id>  failed  mlp:2  normal  created <iso>  MODEL_LOAD_FAILED`. */
export const formatJobSummary = (job: JobSummary): string =>
  `${job.id}  ${job.status}  ${job.model}:${job.modelVersion}  ${job.priority}  created ${job.createdAt}${job.error ? `  ${job.error.code}` : ''}`;

/** Unix seconds (the Batch API's times) as ISO. */
const isoOfSeconds = (s: number) => new Date(s * 1000).toISOString();

/** `3/4 done (3 completed, 1 failed)`: a Batch API batch's request counts. */
const batchCounts = ({ request_counts: c }: BulkBatch) => `${c.completed + c.failed}/${c.total} done (${c.completed} completed, ${c.failed} failed)`;

/** One batch of a list: `<id>  completed  /v1/jobs  4/4 done (4 completed, 0 failed)  created <iso>`. */
export const formatBulkBatchSummary = (b: BulkBatch): string => `${b.id}  ${b.status}  ${b.endpoint}  ${batchCounts(b)}  created ${isoOfSeconds(b.created_at)}`;

/** A Batch API batch: status and counts, its files, and why its file was refused when it failed. */
export function formatBulkBatch(b: BulkBatch): string[] {
  const lines = [formatBulkBatchSummary(b), `  input ${b.input_file_id}  window ${b.completion_window}  expires ${isoOfSeconds(b.expires_at)}`];
  if (b.output_file_id) lines.push(`  output ${b.output_file_id}`);
  if (b.error_file_id) lines.push(`  errors ${b.error_file_id}`);
  const metadata = Object.entries(b.metadata ?? {});
  if (metadata.length) lines.push(`  metadata ${metadata.map(([k, v]) => `${k}=${v}`).join(' ')}`);
  for (const e of b.errors?.data ?? []) lines.push(`  error ${e.line === null ? '' : `line ${e.line}: `}${e.code}: ${e.message}`);
  return lines;
}
