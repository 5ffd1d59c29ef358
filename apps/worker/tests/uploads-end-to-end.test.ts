// Uploads end to end (issue 18): a client creates an upload, PUTs the input's raw
// bytes to the presigned URL, and submits a job naming it; a worker runs it, and
// the outputs are those of the same input sent as JSON data. Both sizes: one the
// API keeps inline (read from the upload), one copied into the job's key in S3.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack, type Stack, type TestProcess } from '@inferq/test-utils';

let stack: Stack;
let worker: TestProcess;
beforeAll(async () => {
  stack = await startStack({ logLevel: 'warn' });
  await stack.registerModel('mlp');
  worker = await stack.startWorker();
  await stack.waitUntilServed('mlp');
});
afterAll(async () => {
  await worker?.stop();
  await stack?.close();
});

describe('an input uploaded to S3 and named in the job', () => {
  for (const rows of [2, 300]) {
    it(`gives the outputs the same input gives as JSON (${rows} × 64 FP32, ${rows * 256} bytes)`, async () => {
      const values = Float32Array.from({ length: rows * 64 }, (_, i) => Math.sin(i) * 0.5);
      const wait = { prefer: 'wait=30' };
      const json = await stack.request(
        'POST',
        '/v1/jobs',
        { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], data: Array.from(values) }] },
        wait,
      );
      expect(json.status, JSON.stringify(json.json)).toBe(200);

      const created = await stack.request('POST', '/v1/uploads', { datatype: 'FP32', shape: [rows, 64] });
      expect(created.status, JSON.stringify(created.json)).toBe(201);
      const upload = created.json;
      const put = await fetch(upload.url, { method: 'PUT', headers: upload.headers, body: new Uint8Array(values.buffer) });
      expect(put.status).toBe(200);
      const viaUpload = await stack.request(
        'POST',
        '/v1/jobs',
        { model: 'mlp', inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], upload: upload.id }] },
        wait,
      );
      expect(viaUpload.status, JSON.stringify(viaUpload.json)).toBe(200);
      expect(viaUpload.json.status).toBe('succeeded');

      const a = await stack.request('GET', `/v1/jobs/${json.json.id}?encoding=base64`);
      const b = await stack.request('GET', `/v1/jobs/${viaUpload.json.id}?encoding=base64`);
      const strip = (outputs: { name: string; datatype: string; shape: number[]; data?: unknown; url?: string }[]) =>
        outputs.map(({ name, datatype, shape, data, url }) => ({ name, datatype, shape, hasData: data !== undefined || url !== undefined }));
      expect(strip(b.json.outputs)).toEqual(strip(a.json.outputs));
      const bytesOf = async (job: { outputs: { data?: string; url?: string }[] }) =>
        job.outputs[0]!.data !== undefined ? Buffer.from(job.outputs[0]!.data, 'base64') : Buffer.from(await (await fetch(job.outputs[0]!.url!)).arrayBuffer());
      expect((await bytesOf(b.json)).equals(await bytesOf(a.json))).toBe(true);

      // Used once.
      const again = await stack.request('POST', '/v1/jobs', {
        model: 'mlp',
        inputs: [{ name: 'features', datatype: 'FP32', shape: [rows, 64], upload: upload.id }],
      });
      expect(again.status).toBe(400);
      expect(again.json.code).toBe('UPLOAD_NOT_FOUND');
    });
  }
});
