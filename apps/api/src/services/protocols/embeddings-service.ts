import type { Tokenizer } from '@huggingface/tokenizers';
import {
  encodeBase64,
  type EmbeddingSettings,
  type EmbeddingsBody,
  type EmbeddingsResponse,
  type InputTensor,
  type Priority,
  type RawTensor,
  type TensorSpec,
} from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { ModelRecord } from '@inferq/db';
import type { Principal } from '../keys/api-keys-service.ts';
import type { ModelsService } from '../models/models-service.ts';
import { floatValues, poolEmbedding } from './pooling.ts';
import type { TokenizerCache } from '../models/tokenizers.ts';
import type { SubmitJobInput } from '../jobs/jobs-service.ts';
import { requireSucceeded, type SubmitAndWait } from '../jobs/submit-and-wait.ts';

/** Shortest padded length: texts of 1 to 8 tokens share one batch shape. */
const MIN_PADDED_TOKENS = 8;

interface EmbedRequest {
  principal: Principal;
  body: EmbeddingsBody;
  routingKey?: string;
  traceContext?: Record<string, string>;
}

/** What answering an embeddings request takes once its jobs have run: the version, each text's tokens, the caller's options. */
export interface EmbeddingPlan {
  /** `name:version` */
  model: string;
  tokens: number[];
  dimensions?: number;
  encodingFormat?: EmbeddingsBody['encoding_format'];
}

/** One text's job's outputs, read on demand (only those named). */
type OutputsOf = (names?: ReadonlySet<string>) => Promise<RawTensor[]>;

export interface EmbeddingsService {
  /** Tokenises each text, runs each as one job on the model's queue (batched with others), waits for all and pools their outputs. */
  embed(request: EmbedRequest): Promise<EmbeddingsResponse>;
  /** Every check `embed` makes, and the jobs it would submit (one a text, in order) with the plan to answer them; nothing submitted. */
  plan(request: EmbedRequest & { priority?: Priority }): Promise<{ plan: EmbeddingPlan; jobs: SubmitJobInput[] }>;
  /** The answer from the texts' succeeded jobs' outputs, in text order. */
  answer(plan: EmbeddingPlan, outputs: readonly OutputsOf[]): Promise<EmbeddingsResponse>;
}

export interface EmbeddingsServiceDeps {
  models: ModelsService;
  /** Runs each text's job, waiting for all at most WAIT_MAX_S. */
  runner: SubmitAndWait;
  tokenizers: TokenizerCache;
}

const settingsOf = (model: ModelRecord): EmbeddingSettings => {
  if (!model.embedding)
    throw new AppError('MODEL_NOT_EMBEDDING', `model ${model.name}:${model.version} was registered without a tokenizer; it does not serve embeddings`);
  return model.embedding;
};

const tooLong = (index: number, tokens: number, max: number): AppError =>
  new AppError('INPUT_TOO_LONG', `input ${index} has ${tokens} tokens; the model takes at most ${max}`, {
    errors: [{ pointer: `/body/input/${index}`, code: 'INPUT_TOO_LONG', detail: `${tokens} tokens > ${max}` }],
  });

const tooManyDimensions = (dimensions: number, width: number): AppError =>
  new AppError('VALIDATION_FAILED', `dimensions ${dimensions} is more than the model's ${width}`, {
    errors: [{ pointer: '/body/dimensions', code: 'VALIDATION_FAILED', detail: `at most ${width}` }],
  });

/** The token ids of each input: texts through the tokenizer (special tokens added), token arrays as they are. */
function tokenize(input: EmbeddingsBody['input'], tokenizer: Tokenizer, settings: EmbeddingSettings): number[][] {
  const items: Array<string | number[]> =
    typeof input === 'string' ? [input] : typeof input[0] === 'number' ? [input as number[]] : (input as Array<string | number[]>);
  const vocabSize = items.some((i) => typeof i !== 'string') ? tokenizer.get_vocab(true).size : 0;
  return items.map((item, index) => {
    const ids = typeof item === 'string' ? tokenizer.encode(item).ids : item;
    if (ids.length > settings.maxTokens) throw tooLong(index, ids.length, settings.maxTokens);
    const unknown = typeof item === 'string' ? undefined : ids.find((id: number) => id >= vocabSize);
    if (unknown !== undefined) {
      throw new AppError('VALIDATION_FAILED', `input ${index} has token id ${unknown}; the tokenizer's vocabulary has ${vocabSize}`, {
        errors: [{ pointer: `/body/input/${index}`, code: 'VALIDATION_FAILED', detail: `token id ${unknown} is out of range` }],
      });
    }
    return ids;
  });
}

/**
 * The job inputs for one text. Where the model takes an attention mask the
 * ids are padded (mask 0) to the next power of two, so texts of similar
 * length share a batch shape; a fixed sequence length is always filled.
 */
function tokenTensors(ids: number[], inputs: readonly TensorSpec[], settings: EmbeddingSettings, padId: number): InputTensor[] {
  const fixed = inputs.find((t) => t.name === 'input_ids')!.shape[1]!;
  const masked = inputs.some((t) => t.name === 'attention_mask');
  const length = fixed > 0 ? fixed : masked ? Math.min(settings.maxTokens, 2 ** Math.ceil(Math.log2(Math.max(ids.length, MIN_PADDED_TOKENS)))) : ids.length;
  const padded = (real: (i: number) => number, pad: number) => Array.from({ length }, (_, i) => (i < ids.length ? real(i) : pad));
  const values: Record<string, number[]> = {
    input_ids: padded((i) => ids[i]!, padId),
    attention_mask: padded(() => 1, 0),
    token_type_ids: padded(() => 0, 0),
  };
  return inputs.map((t) => ({ name: t.name, datatype: t.datatype, shape: [1, length], data: values[t.name]! }));
}

/** The pooled embedding of one text from its job's output; S3 is read only for an output kept there. */
async function readEmbedding(outputs: OutputsOf, settings: EmbeddingSettings, tokens: number, dimensions?: number): Promise<Float64Array> {
  const [tensor] = await outputs(new Set([settings.output]));
  if (!tensor) throw new AppError('INFERENCE_FAILED', `a job has no output "${settings.output}"`);
  const width = tensor.shape[tensor.shape.length - 1]!;
  // A dynamic width is known only now.
  if (dimensions !== undefined && dimensions > width) throw tooManyDimensions(dimensions, width);
  return poolEmbedding(floatValues(tensor.datatype, tensor.data), tensor.shape, tokens, settings, dimensions);
}

export function createEmbeddingsService(deps: EmbeddingsServiceDeps): EmbeddingsService {
  const service: EmbeddingsService = {
    async plan({ principal, body, routingKey, traceContext, priority = 'normal' }) {
      // Routed once: every text of a request is embedded by the same version.
      const model: ModelRecord = await deps.models.routeModel(body.model, { routingKey });
      const settings = settingsOf(model);
      const width = model.signature.outputs.find((o) => o.name === settings.output)?.shape.at(-1) ?? -1;
      if (body.dimensions !== undefined && width > 0 && body.dimensions > width) throw tooManyDimensions(body.dimensions, width);
      const tokenizer = await deps.tokenizers.forModel(model);
      const texts = tokenize(body.input, tokenizer, settings);
      const ref = `${model.name}:${model.version}`;
      const padId = tokenizer.token_to_id('[PAD]') ?? tokenizer.token_to_id('<pad>') ?? 0;
      return {
        plan: { model: ref, tokens: texts.map((ids) => ids.length), dimensions: body.dimensions, encodingFormat: body.encoding_format },
        jobs: texts.map((ids) => ({
          principal,
          model: ref,
          inputs: tokenTensors(ids, model.signature.inputs, settings, padId),
          priority,
          metadata: {},
          idempotencyKey: undefined,
          traceContext,
        })),
      };
    },

    async answer(plan, outputs) {
      const settings = settingsOf(await deps.models.lookupModel(plan.model));
      const embeddings = await Promise.all(outputs.map((read, i) => readEmbedding(read, settings, plan.tokens[i]!, plan.dimensions)));
      const tokens = plan.tokens.reduce((sum, n) => sum + n, 0);
      return {
        object: 'list',
        data: embeddings.map((values, index) => ({
          object: 'embedding',
          index,
          embedding: plan.encodingFormat === 'base64' ? encodeBase64(new Uint8Array(Float32Array.from(values).buffer)) : Array.from(values),
        })),
        model: plan.model,
        usage: { prompt_tokens: tokens, total_tokens: tokens },
      };
    },

    async embed(request) {
      const { plan, jobs } = await service.plan(request);
      const waitS = deps.runner.waitSeconds();
      const waited = await deps.runner.submitAndWait(jobs, waitS);
      requireSucceeded(waited, waitS);
      return service.answer(
        plan,
        waited.map((w) => w.readOutputs),
      );
    },
  };
  return service;
}
