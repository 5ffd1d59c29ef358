import { createInterface } from 'node:readline';
import type { BulkBatchError } from '@inferq/db';
import type { BatchEndpointHandler } from './batch-endpoints.ts';

// A batch's input file, line by line: each line is one request in OpenAI's
// shape, `{"custom_id", "method": "POST", "url": <the batch's endpoint>, "body"}`.
// The file is read as a stream (never whole); blank lines are skipped, as
// OpenAI's are, and line numbers count from 1 over the file's own lines.

/** The longest custom_id kept (OpenAI's limit is not published; 512 is generous). */
const CUSTOM_ID_MAX = 512;
/** Most errors a refused file reports (the first ones, in line order). */
export const FILE_ERRORS_MAX = 100;

export interface BatchLine {
  /** The file's line, from 1. */
  line: number;
  customId: string;
  /** Checked by the endpoint's handler. */
  body: unknown;
}

const error = (line: number, code: string, message: string, param: string | null = null): BulkBatchError => ({ code, message, line, param });

/** One line's request, or why it cannot be one. */
export function parseBatchLine(text: string, line: number, endpoint: { path: string; handler: BatchEndpointHandler }): BatchLine | BulkBatchError {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return error(line, 'invalid_json_line', `line ${line} is not JSON`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return error(line, 'invalid_request', `line ${line} is not a JSON object`);
  const { custom_id: customId, method, url, body } = value as Record<string, unknown>;
  if (typeof customId !== 'string' || customId.length === 0 || customId.length > CUSTOM_ID_MAX)
    return error(line, 'missing_required_parameter', `line ${line}: custom_id must be a string of 1 to ${CUSTOM_ID_MAX} characters`, 'custom_id');
  if (method !== 'POST') return error(line, 'invalid_request', `line ${line}: method must be POST`, 'method');
  if (url !== endpoint.path) return error(line, 'mismatched_endpoint', `line ${line}: url ${String(url)} is not the batch's endpoint ${endpoint.path}`, 'url');
  const wrong = endpoint.handler.check(body);
  if (wrong !== undefined) return error(line, 'invalid_request', `line ${line}: ${wrong}`, 'body');
  return { line, customId, body };
}

/** The file's non-blank lines with their numbers, read from the stream as they come. */
export async function* readLines(stream: NodeJS.ReadableStream): AsyncGenerator<{ line: number; text: string }> {
  const reader = createInterface({ input: stream, crlfDelay: Infinity });
  let line = 0;
  try {
    for await (const text of reader) {
      line++;
      if (text.trim().length > 0) yield { line, text };
    }
  } finally {
    reader.close();
    (stream as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
  }
}
