import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { POOLINGS, type Pooling } from '@inferq/contracts';
import type { ModelUpload } from '../models.ts';
import { emit, integerOption, onePositional, stringOption, type Command, type OptionValues } from './command.ts';
import { UsageError } from './config.ts';
import { formatModel } from './format.ts';

export const modelsPush: Command = {
  usage: 'models push <model.onnx> [--name NAME] [--max-batch-size N] [--max-batch-delay-ms N] [--response-cache] '
    + '[--tokenizer tokenizer.json [--pooling mean|cls|none] [--no-normalize] [--embedding-output NAME] [--max-tokens N]]',
  options: {
    name: { type: 'string' }, 'max-batch-size': { type: 'string' }, 'max-batch-delay-ms': { type: 'string' }, 'response-cache': { type: 'boolean' },
    tokenizer: { type: 'string' }, pooling: { type: 'string' }, 'no-normalize': { type: 'boolean' }, 'embedding-output': { type: 'string' }, 'max-tokens': { type: 'string' },
  },
  async run(ctx) {
    const path = onePositional(ctx.args, 'model file');
    const model = await ctx.client.models.upload({
      name: stringOption(ctx.values, 'name') ?? basename(path).replace(/\.onnx$/i, ''),
      file: await readFile(path),
      maxBatchSize: integerOption(ctx.values, 'max-batch-size', { min: 1, max: 4096 }),
      maxBatchDelayMs: integerOption(ctx.values, 'max-batch-delay-ms', { min: 0, max: 60_000 }),
      responseCache: ctx.values['response-cache'] === true,
      embedding: await embeddingOptions(ctx.values),
    });
    emit(ctx, model, () => [`registered ${formatModel(model)}`]);
    return 0;
  },
};

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
