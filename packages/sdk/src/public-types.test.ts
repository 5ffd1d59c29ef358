import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { Batch, ErrorCode, Job, JobAccepted, Model, Principal, SubmitJobBody, Usage, UsageQuery } from '@inferq/contracts';
import { createClient, InferqError, outputArray, tensor, type CreatedKey, type InferqErrorCode, type JobSummary, type SubmitResult } from './index.ts';

// tsc checks these (the root typecheck covers packages/*/src); the calls sit in
// functions that never run, so nothing reaches the network.
const typesOnly = (_check: () => void): void => {};

describe('public types', () => {
  const client = createClient({ baseUrl: 'http://127.0.0.1:1', apiKey: 'k' });

  it('submit takes the contract body and answers the accepted job, or with wait either form', () => {
    expectTypeOf(client.jobs.submit).parameter(0).toEqualTypeOf<SubmitJobBody>();
    typesOnly(() => {
      expectTypeOf(client.jobs.submit({ model: 'mlp', inputs: [] })).resolves.toEqualTypeOf<JobAccepted>();
      expectTypeOf(client.jobs.submit({ model: 'mlp', inputs: [] }, { wait: 5 })).resolves.toEqualTypeOf<SubmitResult>();
    });
    expectTypeOf<SubmitResult>().toEqualTypeOf<JobAccepted | Job>();
    expectTypeOf(client.jobs.wait).returns.resolves.toEqualTypeOf<Job>();
  });

  it('list yields job summaries, without outputs', () => {
    typesOnly(() => expectTypeOf(client.jobs.list({ status: 'failed' })).toEqualTypeOf<AsyncIterableIterator<JobSummary>>());
    expectTypeOf<JobSummary>().not.toHaveProperty('outputs');
    expectTypeOf<JobSummary['status']>().toEqualTypeOf<Job['status']>();
    // @ts-expect-error an unknown status is refused at compile time
    typesOnly(() => void client.jobs.list({ status: 'exploded' }));
  });

  it('models and tensors are typed by the contracts and the datatype', () => {
    expectTypeOf(client.models.get).returns.resolves.toEqualTypeOf<Model>();
    expectTypeOf(tensor).returns.toEqualTypeOf<SubmitJobBody['inputs'][number]>();
    expectTypeOf(outputArray<'FP32'>).returns.toEqualTypeOf<Float32Array>();
    expectTypeOf(outputArray<'INT64'>).returns.toEqualTypeOf<BigInt64Array>();
  });

  it('usage and batches are typed by the contracts, and group by key or model only', () => {
    expectTypeOf(client.usage).parameter(0).toEqualTypeOf<UsageQuery | undefined>();
    expectTypeOf(client.usage).returns.resolves.toEqualTypeOf<Usage>();
    expectTypeOf<Usage['items'][number]['deviceMs']>().toEqualTypeOf<number>();
    expectTypeOf(client.batches.get).returns.resolves.toEqualTypeOf<Batch>();
    expectTypeOf<Batch['jobs'][number]['deviceMs']>().toEqualTypeOf<number | null>();
    typesOnly(() => void client.usage({ from: '2025-06-01T00:00:00Z', groupBy: 'model' }));
    // @ts-expect-error only key and model are groupings
    typesOnly(() => void client.usage({ groupBy: 'worker' }));
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
