import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { emit, integerOption, onePositional, stringOption, type Command } from './command.ts';
import { formatModel } from './format.ts';

export const modelsPush: Command = {
  usage: 'models push <model.onnx> [--name NAME] [--max-batch-size N] [--max-batch-delay-ms N] [--response-cache]',
  options: { name: { type: 'string' }, 'max-batch-size': { type: 'string' }, 'max-batch-delay-ms': { type: 'string' }, 'response-cache': { type: 'boolean' } },
  async run(ctx) {
    const path = onePositional(ctx.args, 'model file');
    const model = await ctx.client.models.upload({
      name: stringOption(ctx.values, 'name') ?? basename(path).replace(/\.onnx$/i, ''),
      file: await readFile(path),
      maxBatchSize: integerOption(ctx.values, 'max-batch-size', { min: 1, max: 4096 }),
      maxBatchDelayMs: integerOption(ctx.values, 'max-batch-delay-ms', { min: 0, max: 60_000 }),
      responseCache: ctx.values['response-cache'] === true,
    });
    emit(ctx, model, () => [`registered ${formatModel(model)}`]);
    return 0;
  },
};

export const modelsList: Command = {
  usage: 'models list',
  options: {},
  async run(ctx) {
    const models = await ctx.client.models.list();
    emit(ctx, models, () => (models.length ? models.map(formatModel) : ['no models']));
    return 0;
  },
};
