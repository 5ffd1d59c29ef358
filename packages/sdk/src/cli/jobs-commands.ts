import { readFile } from 'node:fs/promises';
import type { InputTensor, Priority, SubmitJobBody } from '@inferq/contracts';
import { UsageError } from './config.ts';
import { emit, integerOption, onePositional, requiredOption, stringOption, type Command } from './command.ts';
import { formatJob } from './format.ts';

/** `--input` holds the inputs array, or a body whose `model` the flag overrides. */
async function readSubmitBody(path: string, model: string, priority: string | undefined): Promise<SubmitJobBody> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`--input ${path}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const body = (Array.isArray(parsed) ? { inputs: parsed as InputTensor[] } : parsed) as Partial<SubmitJobBody>;
  return { ...body, model, inputs: body.inputs ?? [], ...(priority ? { priority: priority as Priority } : {}) };
}

export const jobsSubmit: Command = {
  usage: 'jobs submit --model NAME --input FILE.json [--wait SECONDS] [--priority high|normal|low] [--idempotency-key KEY]',
  options: {
    model: { type: 'string' },
    input: { type: 'string' },
    wait: { type: 'string' },
    priority: { type: 'string' },
    'idempotency-key': { type: 'string' },
  },
  async run(ctx) {
    const body = await readSubmitBody(requiredOption(ctx.values, 'input'), requiredOption(ctx.values, 'model'), stringOption(ctx.values, 'priority'));
    const result = await ctx.client.jobs.submit(body, {
      wait: integerOption(ctx.values, 'wait', { min: 0, max: 3600 }),
      idempotencyKey: stringOption(ctx.values, 'idempotency-key'),
    });
    emit(ctx, result, () => formatJob(result));
    return 0;
  },
};

export const jobsGet: Command = {
  usage: 'jobs get <id> [--encoding json|base64]',
  options: { encoding: { type: 'string' } },
  async run(ctx) {
    const encoding = stringOption(ctx.values, 'encoding');
    if (encoding !== undefined && encoding !== 'json' && encoding !== 'base64') throw new UsageError('--encoding is json or base64');
    const job = await ctx.client.jobs.get(onePositional(ctx.args, 'job id'), { encoding });
    emit(ctx, job, () => formatJob(job));
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
