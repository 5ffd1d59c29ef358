import { describe, expect, it } from 'vitest';
import { exampleBulkBatch, type BulkBatch } from '@inferq/contracts';
import { createClient, type FetchLike } from './index.ts';

const batch = (status: BulkBatch['status'], completed = 0, failed = 0): BulkBatch => ({
  ...exampleBulkBatch,
  status,
  created_at: 1,
  in_progress_at: null,
  expires_at: 86_401,
  request_counts: { total: 4, completed, failed },
  metadata: null,
});

interface Asked {
  url: string;
  method: string;
  body: unknown;
}

/** A client whose fetch records each request and answers from `answers` in turn (the last one again once they run out). */
function clientAnswering(...answers: Array<() => Response | Promise<Response>>) {
  const asked: Asked[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    asked.push({ url, method: init.method ?? 'GET', body: typeof init.body === 'string' ? JSON.parse(init.body) : init.body });
    return answers[Math.min(asked.length, answers.length) - 1]!();
  };
  return { asked, client: createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch, submitRetry: { attempts: 3, maxElapsedMs: 5000 } }) };
}

const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  Response.json({ type: 'about:blank', title: code, status, code }, { status, headers: { 'content-type': 'application/problem+json', ...headers } });

describe('batches', () => {
  it('create sends the file id with endpoint /v1/jobs and a 24h window unless given, and again when refused for now', async () => {
    const { asked, client } = clientAnswering(
      () => problem(429, 'RATE_LIMITED', { 'retry-after': '0' }),
      () => Response.json(batch('validating')),
    );
    expect(await client.batches.create({ input_file_id: 'file-1', metadata: { run: 'nightly' } })).toEqual(batch('validating'));
    expect(asked).toHaveLength(2);
    expect(asked[1]).toEqual({
      url: 'http://api.test/v1/batches',
      method: 'POST',
      body: { input_file_id: 'file-1', endpoint: '/v1/jobs', completion_window: '24h', metadata: { run: 'nightly' } },
    });
    await client.batches.create({ input_file_id: 'file-2', endpoint: '/v1/embeddings', completion_window: '48h' });
    expect(asked[2]!.body).toEqual({ input_file_id: 'file-2', endpoint: '/v1/embeddings', completion_window: '48h' });
  });

  it('create is not sent again after no answer or a 502, which may have made the batch', async () => {
    for (const answer of [() => Promise.reject(new TypeError('fetch failed')), () => problem(502, 'HTTP_ERROR')]) {
      const { asked, client } = clientAnswering(answer);
      await expect(client.batches.create({ input_file_id: 'file-1' })).rejects.toThrow();
      expect(asked).toHaveLength(1);
    }
  });

  it('wait polls until the batch ends, calling onProgress with each poll, and waits out a 503', async () => {
    const { asked, client } = clientAnswering(
      () => Response.json(batch('validating')),
      () => problem(503, 'SERVICE_UNAVAILABLE', { 'retry-after': '0' }),
      () => Response.json(batch('in_progress', 1)),
      () => Response.json(batch('finalizing', 3, 1)),
      () => Response.json(batch('completed', 3, 1)),
    );
    const seen: string[] = [];
    const ended = await client.batches.wait('batch_1', { pollMs: 1, onProgress: (b) => seen.push(`${b.status} ${b.request_counts.completed}`) });
    expect(ended.status).toBe('completed');
    expect(seen).toEqual(['validating 0', 'in_progress 1', 'finalizing 3', 'completed 3']);
    expect(asked.map((a) => a.url)).toEqual(Array(5).fill('http://api.test/v1/batches/batch_1'));
  });

  it('wait ends at failed, expired or cancelled too, and stops with the signal, leaving the batch alone', async () => {
    for (const status of ['failed', 'expired', 'cancelled'] as const) {
      const { client } = clientAnswering(() => Response.json(batch(status)));
      expect((await client.batches.wait('b', { pollMs: 1 })).status).toBe(status);
    }
    const { asked, client } = clientAnswering(() => Response.json(batch('in_progress')));
    const stop = new AbortController();
    const waiting = client.batches.wait('b', { pollMs: 5, signal: stop.signal, onProgress: () => asked.length === 2 && stop.abort(new Error('enough')) });
    await expect(waiting).rejects.toThrow('enough');
    expect(asked.every((a) => a.method === 'GET')).toBe(true);
  });

  it('wait throws what is not worth waiting out', async () => {
    const { client } = clientAnswering(() => problem(404, 'BATCH_NOT_FOUND'));
    await expect(client.batches.wait('b', { pollMs: 1 })).rejects.toMatchObject({ status: 404, code: 'BATCH_NOT_FOUND' });
  });

  it('list follows `after` through the pages; cancel posts; inferenceBatches reads a worker run from /v1/inference-batches', async () => {
    const page = (ids: string[], more: boolean) =>
      Response.json({ object: 'list', data: ids.map((id) => ({ ...batch('completed'), id })), first_id: ids[0], last_id: ids.at(-1), has_more: more });
    const { asked, client } = clientAnswering(
      () => page(['b2'], true),
      () => page(['b1'], false),
      () => Response.json(batch('cancelling')),
      () => Response.json({ id: '0190a1b2-0000-7000-8000-000000000000', jobs: [] }),
    );
    const ids: string[] = [];
    for await (const b of client.batches.list({ limit: 1 })) ids.push(b.id);
    expect(ids).toEqual(['b2', 'b1']);
    expect((await client.batches.cancel('b1')).status).toBe('cancelling');
    await client.inferenceBatches.get('0190a1b2-0000-7000-8000-000000000000');
    expect(asked.map((a) => `${a.method} ${a.url}`)).toEqual([
      'GET http://api.test/v1/batches?limit=1',
      'GET http://api.test/v1/batches?limit=1&after=b2',
      'POST http://api.test/v1/batches/b1/cancel',
      'GET http://api.test/v1/inference-batches/0190a1b2-0000-7000-8000-000000000000',
    ]);
  });
});
