import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import type { InputTensor, Priority, SubmitJobBody } from '@inferq/contracts';
import type { SubmitOptions } from '../jobs.ts';
import type { SubmitInput, SubmitRequest } from '../submit-body.ts';
import { isRetryableSubmitError } from '../submit-retry.ts';
import { UsageError } from './config.ts';
import { emit, integerOption, onePositional, stringOption, type Command, type OptionValues } from './command.ts';
import { formatJob } from './format.ts';
import { isTensorFlag, readTensorFlag, TENSOR_FLAG_USAGE, writeOutputFiles, type OutputFormat } from './tensor-files.ts';

/** `--input FILE.json` holds the inputs array, or a body whose `model` the flag overrides. */
async function readJsonBody(path: string): Promise<Partial<SubmitJobBody>> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--input ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  return (Array.isArray(parsed) ? { inputs: parsed as InputTensor[] } : parsed) as Partial<SubmitJobBody>;
}

/** The body from the `--input` flags: at most one JSON file, and tensor files that add (or replace, by name) its inputs. */
async function readSubmitBody(flags: readonly string[], model: string, priority: string | undefined): Promise<SubmitRequest> {
  const jsonFiles = flags.filter((f) => !isTensorFlag(f));
  if (flags.length === 0) throw new UsageError(`--input is required: FILE.json, or one per tensor, ${TENSOR_FLAG_USAGE}`);
  if (jsonFiles.length > 1) throw new UsageError(`at most one --input FILE.json; got ${jsonFiles.join(', ')}`);
  const body = jsonFiles[0] === undefined ? {} : await readJsonBody(jsonFiles[0]);
  const files = await Promise.all(flags.filter(isTensorFlag).map(readTensorFlag));
  const named = new Set(files.map((f) => f.name));
  const inputs: SubmitInput[] = [...(body.inputs ?? []).filter((i) => !named.has(i.name)), ...files];
  return { ...body, model, inputs, ...(priority ? { priority: priority as Priority } : {}) };
}

/** `--binary-threshold BYTES|never`: when the SDK frames the body (its default, 4 KiB, unless given). */
export function binaryThresholdOption(values: OptionValues): Pick<SubmitOptions, 'binaryThresholdBytes'> {
  const text = stringOption(values, 'binary-threshold');
  if (text === undefined) return {};
  if (text === 'never') return { binaryThresholdBytes: Infinity };
  return { binaryThresholdBytes: integerOption(values, 'binary-threshold', { min: 0, max: Number.MAX_SAFE_INTEGER }) };
}

export const jobsSubmit: Command = {
  usage:
    'jobs submit --model NAME --input FILE.json|' +
    `${TENSOR_FLAG_USAGE} [--input …] [--binary-threshold BYTES|never] [--wait SECONDS] [--priority high|normal|low] ` +
    '[--idempotency-key KEY] [--keep-inputs]   (tensors of 4 KiB or more go binary; 32 MiB or more are uploaded first; ' +
    'refused-for-now and unanswered tries are sent again under one Idempotency-Key, a new UUID unless given)',
  options: {
    'keep-inputs': { type: 'boolean' },
    model: { type: 'string' },
    input: { type: 'string', multiple: true },
    'binary-threshold': { type: 'string' },
    wait: { type: 'string' },
    priority: { type: 'string' },
    'idempotency-key': { type: 'string' },
  },
  async run(ctx) {
    const model = stringOption(ctx.values, 'model');
    if (model === undefined) throw new UsageError('--model is required');
    const flags = (ctx.values.input as unknown as string[] | undefined) ?? [];
    const body = await readSubmitBody(flags, model, stringOption(ctx.values, 'priority'));
    if (ctx.values['keep-inputs'] === true) body.keepInputs = true;
    // Made here rather than by the SDK so that, when every try was refused or unanswered, it can be named for the next run.
    const idempotencyKey = stringOption(ctx.values, 'idempotency-key') ?? randomUUID();
    const wait = integerOption(ctx.values, 'wait', { min: 0, max: 3600 });
    const result = await ctx.client.jobs.submit(body, { wait, idempotencyKey, ...binaryThresholdOption(ctx.values) }).catch((err: unknown) => {
      if (isRetryableSubmitError(err)) ctx.io.stderr(`inferq: to try again without risking a second job, pass --idempotency-key ${idempotencyKey}\n`);
      throw err;
    });
    emit(ctx, result, () => formatJob(result));
    return 0;
  },
};

export const jobsGet: Command = {
  usage: 'jobs get <id> [--encoding json|base64] [--output-dir DIR [--format npy|bin]]   (writes each output as DIR/<name>.npy, read binary)',
  options: { encoding: { type: 'string' }, 'output-dir': { type: 'string' }, format: { type: 'string' } },
  async run(ctx) {
    const id = onePositional(ctx.args, 'job id');
    const encoding = stringOption(ctx.values, 'encoding');
    if (encoding !== undefined && encoding !== 'json' && encoding !== 'base64') throw new UsageError('--encoding is json or base64');
    const dir = stringOption(ctx.values, 'output-dir');
    const format = stringOption(ctx.values, 'format') ?? 'npy';
    if (format !== 'npy' && format !== 'bin') throw new UsageError('--format is npy or bin');
    if (dir === undefined) {
      if (ctx.values.format !== undefined) throw new UsageError('--format goes with --output-dir');
      const job = await ctx.client.jobs.get(id, { encoding });
      emit(ctx, job, () => formatJob(job));
      return 0;
    }
    const job = await ctx.client.jobs.get(id, { binary: true });
    const paths = await writeOutputFiles(dir, job, format as OutputFormat);
    const { outputs = [], ...rest } = job;
    const summary = { ...rest, outputs: outputs.map(({ values: _values, ...o }, i) => ({ ...o, file: paths[i] })) };
    emit(ctx, summary, () => [...formatJob({ ...rest, outputs: outputs.map(({ values: _values, ...o }) => o) }), ...paths.map((p) => `  wrote ${p}`)]);
    return 0;
  },
};

export const jobsDelete: Command = {
  usage: 'jobs delete <id>   (purges it now: data and stored tensors deleted, a tombstone kept; a running job is refused)',
  options: {},
  async run(ctx) {
    const tombstone = await ctx.client.jobs.delete(onePositional(ctx.args, 'job id'));
    emit(ctx, tombstone, () => [`${tombstone.id}  ${tombstone.status}  purged ${tombstone.purgedAt ?? ''} (${tombstone.purgeReason ?? 'deleted'})`]);
    return 0;
  },
};

export const jobsWatch: Command = {
  usage: 'jobs watch <id> [--timeout SECONDS]   (exit status 0 when it succeeds, 1 when it ends otherwise)',
  options: { timeout: { type: 'string' } },
  async run(ctx) {
    const timeoutS = integerOption(ctx.values, 'timeout', { min: 1, max: 86_400 }) ?? 600;
    const job = await ctx.client.jobs.wait(onePositional(ctx.args, 'job id'), {
      timeoutMs: timeoutS * 1000,
      // One line per change; in --json mode one JSON object per line.
      onStatus: (j) =>
        ctx.io.stdout(
          ctx.config.json ? `${JSON.stringify({ id: j.id, status: j.status, at: new Date().toISOString() })}\n` : `${new Date().toISOString()}  ${j.status}\n`,
        ),
    });
    if (!ctx.config.json) for (const line of formatJob(job)) ctx.io.stdout(`${line}\n`);
    return job.status === 'succeeded' ? 0 : 1;
  },
};
