import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type {
  Batch,
  BulkBatch,
  BulkJobActionResult,
  ErrorCode,
  FileObject,
  Job,
  JobAccepted,
  Model,
  Principal,
  SubmitJobBody,
  Usage,
  UsageQuery,
} from '@inferq/contracts';
import {
  createClient,
  InferqError,
  outputArray,
  tensor,
  type CreatedKey,
  type DecodedJob,
  type SubmitRequest,
  type InferqErrorCode,
  type JobFilterQuery,
  type JobSummary,
  type ListJobsQuery,
  type ModelRetirement,
  type SubmitResult,
} from './index.ts';

// tsc checks these (the root typecheck covers packages/*/src); the calls sit in
// functions that never run, so nothing reaches the network.
const typesOnly = (_check: () => void): void => {};

describe('public types', () => {
  const client = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });

  it('submit takes the contract body (or typed-array and upload inputs) and answers the accepted job, or with wait either form', () => {
    expectTypeOf<SubmitJobBody>().toMatchTypeOf<SubmitRequest>();
    typesOnly(() => {
      void client.jobs.submit({ model: 'mlp', inputs: [{ name: 'x', shape: [1, 64], data: new Float32Array(64) }] });
      void client.jobs.submit({ model: 'mlp', inputs: [{ name: 'x', datatype: 'FP32', shape: [1, 64], upload: 'u' }] });
      expectTypeOf(client.jobs.get('id', { binary: true })).resolves.toEqualTypeOf<DecodedJob>();
      expectTypeOf(client.jobs.wait('id', { timeoutMs: 1, binary: true })).resolves.toEqualTypeOf<DecodedJob>();
    });
    typesOnly(() => {
      expectTypeOf(client.jobs.submit({ model: 'mlp', inputs: [] })).resolves.toEqualTypeOf<JobAccepted>();
      expectTypeOf(client.jobs.submit({ model: 'mlp', inputs: [] }, { wait: 5 })).resolves.toEqualTypeOf<SubmitResult>();
    });
    expectTypeOf<SubmitResult>().toEqualTypeOf<JobAccepted | Job>();
    typesOnly(() => expectTypeOf(client.jobs.wait('id', { timeoutMs: 1 })).resolves.toEqualTypeOf<Job>());
  });

  it('list yields job summaries, without outputs', () => {
    typesOnly(() => expectTypeOf(client.jobs.list({ status: 'failed' })).toEqualTypeOf<AsyncIterableIterator<JobSummary>>());
    expectTypeOf<JobSummary>().not.toHaveProperty('outputs');
    expectTypeOf<JobSummary['status']>().toEqualTypeOf<Job['status']>();
    // @ts-expect-error an unknown status is refused at compile time
    typesOnly(() => void client.jobs.list({ status: 'exploded' }));
  });

  it('exports the job filter and list query the console and CLI build, searches included', () => {
    const filter: JobFilterQuery = { id: '0190a1b2', keyId: '5f0e8c2a-1b3d-4e5f-8a9b-0c1d2e3f4a5b', errorCode: 'MODEL_LOAD_FAILED', errorText: 'memory' };
    typesOnly(() => void client.jobs.list(filter));
    expectTypeOf<ListJobsQuery>().toMatchTypeOf<JobFilterQuery>();
    expectTypeOf(client.jobs.page).parameter(0).toEqualTypeOf<ListJobsQuery | undefined>();
  });

  it('bulk cancel and retry take the list filter and answer the counts', () => {
    expectTypeOf(client.jobs.bulkCancel).parameter(0).toEqualTypeOf<JobFilterQuery>();
    expectTypeOf(client.jobs.bulkRetry).returns.resolves.toEqualTypeOf<BulkJobActionResult>();
    // @ts-expect-error the bound is a number
    typesOnly(() => void client.jobs.bulkCancel({ model: 'mlp' }, { limit: '10' }));
  });

  it('models and tensors are typed by the contracts and the datatype', () => {
    expectTypeOf(client.models.get).returns.resolves.toEqualTypeOf<Model>();
    expectTypeOf(tensor).returns.toMatchTypeOf<SubmitJobBody['inputs'][number]>();
    expectTypeOf(outputArray<'FP32'>).returns.toEqualTypeOf<Float32Array>();
    expectTypeOf(outputArray<'INT64'>).returns.toEqualTypeOf<BigInt64Array>();
  });

  it('retire takes a name, an optional version and reroute, and answers the retirement', () => {
    expectTypeOf(client.models.retire).returns.resolves.toEqualTypeOf<ModelRetirement>();
    expectTypeOf<ModelRetirement['versions'][number]['unfinishedJobs']>().toEqualTypeOf<number>();
    expectTypeOf<Model['retiredAt']>().toEqualTypeOf<string | undefined>();
    typesOnly(() => void client.models.retire('mlp', 2, { reroute: true }));
    // @ts-expect-error the version is a number
    typesOnly(() => void client.models.retire('mlp', '2'));
  });

  it('usage and inference batches are typed by the contracts, and group by key or model only', () => {
    expectTypeOf(client.usage).parameter(0).toEqualTypeOf<UsageQuery | undefined>();
    expectTypeOf(client.usage).returns.resolves.toEqualTypeOf<Usage>();
    expectTypeOf<Usage['items'][number]['deviceMs']>().toEqualTypeOf<number>();
    expectTypeOf(client.inferenceBatches.get).returns.resolves.toEqualTypeOf<Batch>();
    expectTypeOf<Batch['jobs'][number]['deviceMs']>().toEqualTypeOf<number | null>();
    typesOnly(() => void client.usage({ from: '2025-06-01T00:00:00Z', groupBy: 'model' }));
    // @ts-expect-error only key and model are groupings
    typesOnly(() => void client.usage({ groupBy: 'worker' }));
  });

  it("the Batch API's files and batches are typed by the contracts, OpenAI's shapes", () => {
    expectTypeOf(client.batches.get).returns.resolves.toEqualTypeOf<BulkBatch>();
    expectTypeOf(client.batches.wait).returns.resolves.toEqualTypeOf<BulkBatch>();
    expectTypeOf(client.batches.list()).toEqualTypeOf<AsyncIterableIterator<BulkBatch>>();
    expectTypeOf(client.files.upload).returns.resolves.toEqualTypeOf<FileObject>();
    expectTypeOf(client.files.lines('f')).toEqualTypeOf<AsyncIterableIterator<string>>();
    typesOnly(() => void client.batches.create({ input_file_id: 'file-1', metadata: { run: 'nightly' } }));
    typesOnly(() => void client.files.upload(new Blob(['{}\n']), { filename: 'requests.jsonl' }));
    // @ts-expect-error only the Batch API's endpoints
    typesOnly(() => void client.batches.create({ input_file_id: 'file-1', endpoint: '/v1/chat/completions' }));
    // @ts-expect-error an upload's purpose is batch
    typesOnly(() => void client.files.upload('requests.jsonl', { purpose: 'fine-tune' }));
  });

  it('keys take an optional integer weight and show it, as /v1/me does', () => {
    expectTypeOf<Parameters<typeof client.keys.create>[0]['weight']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<CreatedKey['weight']>().toEqualTypeOf<number>();
    expectTypeOf<Principal['weight']>().toEqualTypeOf<number>();
    // @ts-expect-error a weight is a number
    typesOnly(() => void client.keys.create({ name: 'k', weight: '2' }));
  });

  it('errors carry the problem, typed', () => {
    expectTypeOf<InferqError['code']>().toEqualTypeOf<InferqErrorCode>();
    expectTypeOf<ErrorCode>().toMatchTypeOf<InferqErrorCode>();
    expectTypeOf<InferqError['retryAfter']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<InferqError['errors'][number]>().toEqualTypeOf<{ pointer: string; code: string; detail: string }>();
  });

  it('the browser entry imports nothing from node: (only src/cli does)', () => {
    const files = readdirSync(import.meta.dirname).filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'));
    for (const file of files) expect(readFileSync(join(import.meta.dirname, file), 'utf8'), file).not.toMatch(/from '(node:|cli-progress|p-retry)|\bprocess\./);
  });
});
