import type { FastifyInstance } from 'fastify';
import { OpenAiProblemSchema } from '@inferq/contracts';
import { addProblemMember } from './error-handler.ts';

// The routes OpenAI's clients call (embeddings, files, batches): their problems
// carry OpenAI's `error` object beside RFC 9457's members, since those clients
// read `error.message` and `error.code`.

/** The problem responses of an OpenAI-compatible route, by status. */
export const openAiProblems = (...statuses: number[]) => Object.fromEntries(statuses.map((s) => [s, OpenAiProblemSchema]));

/** Adds OpenAI's error object to every problem the plugin's routes answer. */
export function registerOpenAiErrors(app: FastifyInstance): void {
  addProblemMember(app, ({ code, message }, statusCode) => ({ message, type: statusCode < 500 ? 'invalid_request_error' : 'server_error', code, param: null }));
}
