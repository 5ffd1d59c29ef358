import type { Job, JobAccepted, Model, Stats, TensorSummary, WorkerStatus } from '@inferq/contracts';

const ms = (v: number | null) => (v === null ? '–' : `${Math.round(v * 10) / 10} ms`);
const kib = (bytes: number) => (bytes < 10_240 ? `${bytes} B` : `${Math.round(bytes / 1024)} KiB`);
const shapeOf = (t: { datatype: string; shape: number[] }) => `${t.datatype}[${t.shape.join(',')}]`;

export const formatModel = (m: Model): string =>
  `${m.name}:${m.version}  ${m.signature.inputs.map((t) => `${t.name} ${t.datatype}[${t.shape.map((d) => (d === -1 ? '?' : d)).join(',')}]`).join(', ')}  batch ${m.batching.maxBatchSize}/${m.batching.maxBatchDelayMs} ms${m.responseCache ? '  cached' : ''}  ${kib(m.sizeBytes)}`;

export function formatJob(job: Job | JobAccepted): string[] {
  if (!('model' in job)) return [`${job.id}  ${job.status}`];
  const lines = [`${job.id}  ${job.status}  ${job.model}:${job.modelVersion}  ${job.priority}  created ${job.createdAt}`];
  if (job.finishedAt) lines.push(`  queue ${ms(job.queueMs)}  infer ${ms(job.inferMs)}  batch ${job.batchSize ?? '–'}  attempts ${job.attempts}`);
  if (job.error) lines.push(`  error ${job.error.code}: ${job.error.message}`);
  for (const o of job.outputs ?? []) lines.push(`  output ${o.name} ${shapeOf(o)} ${kib(o.bytes)}${o.url ? ' (url)' : ''}`);
  for (const i of job.inputs ?? ([] as TensorSummary[])) lines.push(`  input ${i.name} ${shapeOf(i)} ${kib(i.bytes)}`);
  return lines;
}

export function formatStats(s: Stats): string[] {
  const lines = [
    `workers ${s.workersOnline}  submitted ${s.submittedPerSec.toFixed(1)}/s  completed ${s.completedPerSec.toFixed(1)}/s  failed ${s.failedPerSec.toFixed(1)}/s  (scope ${s.scope})`,
    `last ${s.windowMinutes} min: queue p50 ${ms(s.queueMsP50)} p95 ${ms(s.queueMsP95)}  infer p50 ${ms(s.inferMsP50)} p95 ${ms(s.inferMsP95)}  batch ${s.avgBatchSize?.toFixed(1) ?? '–'}  errors ${(s.errorRate * 100).toFixed(1)}%`,
  ];
  for (const q of s.queues) lines.push(`  ${q.model}: waiting ${q.high}/${q.normal}/${q.low} (high/normal/low)  active ${q.active}  delayed ${q.delayed}  workers ${q.workers}`);
  return lines;
}

export const formatWorker = (w: WorkerStatus): string =>
  `${w.workerId}  ${w.device}  ${w.hostname}:${w.pid}  models ${w.modelsServed.join(',') || '–'}  jobs ${w.jobsSucceeded} ok / ${w.jobsFailed} failed`;
