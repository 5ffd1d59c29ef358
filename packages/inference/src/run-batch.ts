import { checkTensorBytes, dataTypeFromOrt, type RawTensor } from '@inferq/contracts';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { concatBatch, splitBatch } from './batch-tensors.ts';
import { fromOrtTensor, toOrtTensor } from './ort-tensors.ts';
import type { BatchRunResult, JobResult } from './thread-protocol.ts';

/** The part of an onnxruntime session a batch run needs. */
export type RunnableSession = Pick<InferenceSession, 'run' | 'inputNames' | 'outputNames' | 'inputMetadata'>;

interface RunTimer {
  inferMs: number;
}

const message = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** Why a job's inputs cannot be fed to the session, or undefined when they can. */
function findInputProblem(session: RunnableSession, job: RawTensor[]): string | undefined {
  for (const t of job) {
    if (!session.inputNames.includes(t.name)) return `"${t.name}" is not an input of the model (inputs: ${session.inputNames.join(', ')})`;
    if (job.filter((o) => o.name === t.name).length > 1) return `input "${t.name}" is given more than once`;
  }
  for (const meta of session.inputMetadata) {
    const t = job.find((o) => o.name === meta.name);
    if (!t) return `input "${meta.name}" is missing`;
    const problem = checkTensorBytes(t.datatype, t.shape, t.data);
    if (problem) return `input "${t.name}": ${problem}`;
    if (!meta.isTensor) continue;
    const expected = dataTypeFromOrt(meta.type);
    if (expected && expected !== t.datatype) return `input "${t.name}" is ${t.datatype}; the model expects ${expected}`;
    // An empty metadata shape may mean "rank unknown", so only declared ranks are checked.
    const fixedMismatch =
      meta.shape.length > 0 && (meta.shape.length !== t.shape.length || meta.shape.some((d, i) => typeof d === 'number' && d !== t.shape[i]));
    if (fixedMismatch) return `input "${t.name}" has shape [${t.shape.join(',')}]; the model expects [${meta.shape.join(',')}]`;
  }
  return undefined;
}

async function timedRun(session: RunnableSession, inputs: RawTensor[], timer: RunTimer): Promise<RawTensor[]> {
  const feeds: Record<string, Tensor> = {};
  for (const t of inputs) feeds[t.name] = toOrtTensor(t);
  const started = performance.now();
  try {
    const outputs = await session.run(feeds);
    return session.outputNames.map((name) => fromOrtTensor(name, outputs[name] as Tensor));
  } finally {
    timer.inferMs += performance.now() - started;
  }
}

/** Rows each job contributes: dim 0, which every input of the job must share. */
function itemCountOf(job: RawTensor[]): number {
  const counts = new Set(job.map((t) => t.shape[0]));
  const [count] = counts;
  if (counts.size !== 1 || count === undefined) throw new Error("a job's inputs do not share one dim 0 to batch on");
  return count;
}

async function runStacked(session: RunnableSession, jobs: RawTensor[][], timer: RunTimer): Promise<RawTensor[][]> {
  const itemCounts = jobs.map(itemCountOf);
  const outputs = await timedRun(session, concatBatch(jobs, [...session.inputNames]), timer);
  return splitBatch(outputs, itemCounts);
}

async function runAlone(session: RunnableSession, job: RawTensor[], timer: RunTimer): Promise<JobResult> {
  try {
    return { ok: true, outputs: await timedRun(session, job, timer) };
  } catch (err) {
    return { ok: false, code: 'INFERENCE_FAILED', message: message(err) };
  }
}

/**
 * Runs jobs through one session: invalid jobs fail alone up front, the rest
 * go through one session.run stacked along dim 0. When that run throws, or
 * its outputs do not split back along dim 0 (a model that is not
 * batch-aligned), each job runs alone so a bad job fails only itself.
 */
export async function runSessionBatch(session: RunnableSession, jobs: RawTensor[][]): Promise<BatchRunResult> {
  const timer: RunTimer = { inferMs: 0 };
  const results: JobResult[] = new Array(jobs.length);
  const valid: number[] = [];
  jobs.forEach((job, i) => {
    const problem = findInputProblem(session, job);
    if (problem) results[i] = { ok: false, code: 'INPUT_DATA_INVALID', message: problem };
    else valid.push(i);
  });
  let fallbackReason: string | undefined;
  if (valid.length > 1) {
    try {
      const perJob = await runStacked(
        session,
        valid.map((i) => jobs[i]!),
        timer,
      );
      valid.forEach((i, k) => (results[i] = { ok: true, outputs: perJob[k]! }));
      return { inferMs: timer.inferMs, mode: 'batched', results };
    } catch (err) {
      fallbackReason = message(err);
    }
  }
  for (const i of valid) results[i] = await runAlone(session, jobs[i]!, timer);
  return { inferMs: timer.inferMs, mode: 'single', results, ...(fallbackReason === undefined ? {} : { fallbackReason }) };
}
