import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { EmbeddingsBodySchema, EmbeddingsHeadersSchema, EmbeddingsResponseSchema } from '@inferq/contracts';
import { openAiProblems, registerOpenAiErrors } from '../plugins/openai-errors.ts';
import { traceContextOf } from '../plugins/tracing.ts';
import type { EmbeddingsService } from '../services/protocols/embeddings-service.ts';

export const openAiEmbeddingsRoutes: FastifyPluginAsyncTypebox<{ embeddings: EmbeddingsService }> = async (app, { embeddings }) => {
  registerOpenAiErrors(app);

  app.post(
    '/v1/embeddings',
    {
      config: { scope: 'jobs:write' },
      schema: {
        tags: ['openai'],
        summary: 'Create embeddings (OpenAI-compatible)',
        description:
          'For encoder models registered with a tokenizer. Each text is tokenised here and runs as one job on ' +
          "the model's queue, batched with other jobs (texts are padded to a power-of-two length where the " +
          'model takes an attention mask, so similar lengths share a batch); the reply waits for all of them, ' +
          'at most WAIT_MAX_S (504 `INFERENCE_TIMEOUT` naming a job that did not finish). Token-id arrays are ' +
          "used as given (add the model's special tokens yourself). Every text of a request runs on one " +
          'version, routed as jobs are (`X-Routing-Key` too). 400 `MODEL_NOT_EMBEDDING` for a model without a ' +
          'tokenizer, `INPUT_TOO_LONG` for a text over its `maxTokens`; 410 `MODEL_VERSION_RETIRED` for a retired version ' +
          '(or a model whose versions are all retired); 503 `MODEL_UNAVAILABLE` when no worker ' +
          "serves it (nothing is submitted). Errors are problem+json with OpenAI's `error` object as well.",
        headers: EmbeddingsHeadersSchema,
        body: EmbeddingsBodySchema,
        response: { 200: EmbeddingsResponseSchema, ...openAiProblems(400, 401, 403, 404, 410, 413, 415, 422, 429, 500, 503, 504) },
      },
    },
    async (request) =>
      embeddings.embed({
        principal: request.principal,
        body: request.body,
        routingKey: request.headers['x-routing-key'],
        traceContext: traceContextOf(request),
      }),
  );
};
