import { afterAll, expect, it } from 'vitest';
import { startPrivateS3, startStack, waitFor, type PrivateService, type Stack } from '@inferq/test-utils';

// Object storage that comes up after the API (MinIO starting beside it): the API starts all the same, says so on
// /readyz, and makes its bucket once storage answers. Before, it exited at start (ECONNREFUSED): a crash loop.

let s3: PrivateService | undefined;
let stack: Stack | undefined;
afterAll(async () => {
  await stack?.close();
  await s3?.close();
});

it('starts without object storage, reports it on /readyz, and is ready once storage answers', async () => {
  s3 = await startPrivateS3();
  await s3.stop();
  stack = await startStack({ apiEnv: s3.env });
  // Told once, when the first try (the S3 client's own retries included) has failed.
  await stack.api.waitForOutput(/object storage cannot be reached; retrying until it answers/);
  const ready = async () =>
    (await fetch(`${stack!.baseUrl}/readyz`)).json() as Promise<{ status: string; checks: { storage?: { ok: boolean; detail?: string } } }>;
  const before = await ready();
  expect(before.status).toBe('degraded');
  expect(before.checks.storage).toMatchObject({ ok: false, detail: expect.stringMatching(/^the bucket is not ready/) });

  await s3.start();
  await waitFor(async () => (await ready()).checks.storage?.ok === true, { timeoutMs: 30_000, what: 'the bucket to be made once storage answers' });
  await stack.registerModel('mlp');
});
