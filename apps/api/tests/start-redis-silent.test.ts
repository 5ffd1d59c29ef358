import { createServer, type Server } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { startStack, type Stack } from '@inferq/test-utils';

// A Redis that accepts the connection and never answers (a host under load, a half-open link): the ready check times
// out and the connection reports an error. The API must still start, say it is not ready, and answer a submit with 503.
let silent: Server | undefined;
let stack: Stack | undefined;
afterAll(async () => {
  await stack?.close();
  silent?.close();
});

it('starts and answers while Redis does not answer', async () => {
  silent = createServer(() => {}).listen(0, '127.0.0.1');
  await new Promise((resolve) => silent!.once('listening', resolve));
  const { port } = silent.address() as { port: number };
  stack = await startStack({ apiEnv: { REDIS_URL: `redis://127.0.0.1:${port}` } });
  expect((await fetch(`${stack.baseUrl}/readyz`)).status).toBe(503);
  await stack.registerModel('mlp');
  const submit = await stack.request('POST', '/v1/jobs', {
    model: 'mlp',
    inputs: [{ name: 'features', shape: [1, 64], datatype: 'FP32', data: Array(64).fill(0) }],
  });
  expect(submit.status).toBe(503);
}, 60_000);
