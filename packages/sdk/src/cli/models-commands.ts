import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { BATCHING_MODES, POOLINGS, type BatchingMode, type Pooling } from '@inferq/contracts';
import type { ModelUpload } from '../models.ts';
import { emit, integerOption, onePositional, stringOption, type Command, type OptionValues } from './command.ts';
import { UsageError } from './config.ts';
import { parseRetention } from '../retention.ts';
import { formatModel, formatModelQueue, formatModelRetention, formatModelRetirement } from './format.ts';

export const modelsPush: Command = {
  usage:
    'models push <model.onnx> [--name NAME] [--max-batch-size N] [--max-batch-delay-ms N] [--batching fixed|auto [--latency-target-ms N]] [--response-cache] ' +
    '[--tokenizer tokenizer.json [--pooling mean|cls|none] [--no-normalize] [--embedding-output NAME] [--max-tokens N]]',
  options: {
    name: { type: 'string' },
    'max-batch-size': { type: 'string' },
    'max-batch-delay-ms': { type: 'string' },
    batching: { type: 'string' },
    'latency-target-ms': { type: 'string' },
    'response-cache': { type: 'boolean' },
    tokenizer: { type: 'string' },
    pooling: { type: 'string' },
    'no-normalize': { type: 'boolean' },
    'embedding-output': { type: 'string' },
    'max-tokens': { type: 'string' },
  },
  async run(ctx) {
    const path = onePositional(ctx.args, 'model file');
    const model = await ctx.client.models.upload({
      name: stringOption(ctx.values, 'name') ?? basename(path).replace(/\.onnx$/i, ''),
      file: await readFile(path),
      maxBatchSize: integerOption(ctx.values, 'max-batch-size', { min: 1, max: 4096 }),
      maxBatchDelayMs: integerOption(ctx.values, 'max-batch-delay-ms', { min: 0, max: 60_000 }),
      ...batchingOptions(ctx.values),
      responseCache: ctx.values['response-cache'] === true,
      embedding: await embeddingOptions(ctx.values),
    });
    emit(ctx, model, () => [`registered ${formatModel(model)}`]);
    return 0;
  },
};

/** --batching and its --latency-target-ms, which only `auto` reads. */
function batchingOptions(values: OptionValues): Pick<ModelUpload, 'batching' | 'latencyTargetMs'> {
  const batching = stringOption(values, 'batching');
  if (batching !== undefined && !(BATCHING_MODES as readonly string[]).includes(batching))
    throw new UsageError(`--batching must be one of ${BATCHING_MODES.join(', ')}`);
  const latencyTargetMs = integerOption(values, 'latency-target-ms', { min: 1, max: 600_000 });
  if (latencyTargetMs !== undefined && batching !== 'auto') throw new UsageError('--latency-target-ms needs --batching auto');
  return { batching: batching as BatchingMode | undefined, latencyTargetMs };
}

/** The --tokenizer group: an encoder uploaded for /v1/embeddings. */
async function embeddingOptions(values: OptionValues): Promise<ModelUpload['embedding']> {
  const tokenizer = stringOption(values, 'tokenizer');
  const pooling = stringOption(values, 'pooling');
  if (tokenizer === undefined) {
    if (pooling !== undefined || values['no-normalize'] || values['embedding-output'] !== undefined || values['max-tokens'] !== undefined) {
      throw new UsageError('--pooling, --no-normalize, --embedding-output and --max-tokens need --tokenizer');
    }
    return undefined;
  }
  if (pooling !== undefined && !(POOLINGS as readonly string[]).includes(pooling)) throw new UsageError(`--pooling must be one of ${POOLINGS.join(', ')}`);
  return {
    tokenizer: await readFile(tokenizer),
    pooling: pooling as Pooling | undefined,
    normalize: values['no-normalize'] === true ? false : undefined,
    output: stringOption(values, 'embedding-output'),
    maxTokens: integerOption(values, 'max-tokens', { min: 1, max: 1_000_000 }),
  };
}

export const modelsList: Command = {
  usage: 'models list',
  options: {},
  async run(ctx) {
    const models = await ctx.client.models.list();
    emit(ctx, models, () => (models.length ? models.map(formatModel) : ['no models']));
    return 0;
  },
};

export const modelsRetention: Command = {
  usage:
    'models retention <name> [--set 7d|12h|30m|SECONDS | --clear]   (how long finished jobs of every version are kept; ' +
    "--set overrides the server default and keys' own, --clear goes back to them)",
  options: { set: { type: 'string' }, clear: { type: 'boolean' } },
  async run(ctx) {
    const name = onePositional(ctx.args, 'model name');
    const set = stringOption(ctx.values, 'set');
    if (set !== undefined && ctx.values.clear === true) throw new UsageError('--set and --clear exclude each other');
    if (set === undefined && ctx.values.clear !== true) {
      const { retention } = await ctx.client.models.get(name);
      if (!retention) throw new UsageError('this server does not report model retention');
      emit(ctx, retention, () => [formatModelRetention(name, retention)]);
      return 0;
    }
    const parsed = set === undefined ? { seconds: null } : parseRetention(set);
    if ('error' in parsed) throw new UsageError(`--set: ${parsed.error}`);
    const saved = await ctx.client.models.setRetention(name, parsed.seconds);
    emit(ctx, saved, () => [formatModelRetention(name, saved)]);
    return 0;
  },
};

export const modelsPause: Command = {
  usage: 'models pause <name>',
  options: {},
  async run(ctx) {
    const queue = await ctx.client.models.pause(onePositional(ctx.args, 'model name'));
    emit(ctx, queue, () => [formatModelQueue(queue)]);
    return 0;
  },
};

export const modelsResume: Command = {
  usage: 'models resume <name>',
  options: {},
  async run(ctx) {
    const queue = await ctx.client.models.resume(onePositional(ctx.args, 'model name'));
    emit(ctx, queue, () => [formatModelQueue(queue)]);
    return 0;
  },
};

/** `name` or `name:version`, as the API takes it. */
function parseModelRef(ref: string): { name: string; version: number | undefined } {
  const match = /^([a-z0-9][a-z0-9._-]{0,62})(?::([1-9][0-9]{0,8}))?$/.exec(ref);
  if (!match) throw new UsageError(`expected <name> or <name>:<version>, not ${JSON.stringify(ref)}`);
  return { name: match[1]!, version: match[2] === undefined ? undefined : Number(match[2]) };
}

export const modelsRetire: Command = {
  usage:
    'models retire <name>[:<version>] [--reroute] [--yes]   (no new jobs for the version, or every version; queued ones finish; ' +
    'asks first unless --yes; --reroute takes it out of the routing table)',
  options: { reroute: { type: 'boolean' }, yes: { type: 'boolean', short: 'y' } },
  async run(ctx) {
    const ref = onePositional(ctx.args, 'model (name or name:version)');
    const { name, version } = parseModelRef(ref);
    if (ctx.values.yes !== true) {
      const what = version === undefined ? `every version of ${name}` : ref;
      // Anything but y or yes is no, and so is a CLI with no way to ask.
      const yes = (await ctx.io.confirm?.(`retire ${what}? It takes no new jobs, and this cannot be undone [y/N] `)) ?? false;
      if (!yes) {
        ctx.io.stderr('nothing retired (answer y to go ahead, or pass --yes to skip the question)\n');
        return 1;
      }
    }
    const retirement = await ctx.client.models.retire(name, version, { reroute: ctx.values.reroute === true });
    emit(ctx, retirement, () => formatModelRetirement(retirement));
    return 0;
  },
};
