import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseInferRequestBody } from '@inferq/contracts';
import { createClient, type FetchLike } from '../index.ts';
import { readNpy, writeNpy } from '../npy.ts';
import type { Io } from './command.ts';
import { jobsBulk } from './bulk-submit.ts';
import { jobsGet, jobsSubmit } from './jobs-commands.ts';
import { parseTensorFlag, readTensorFlag } from './tensor-files.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'inferq-tensor-files-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const floats = (n: number) => Float32Array.from({ length: n }, (_, i) => i - 0.5);
const bytesOf = (a: Float32Array) => new Uint8Array(a.buffer);

/** A command context whose client records the requests and answers `answer`. */
function commandContext(
  values: Record<string, unknown>,
  args: string[] = [],
  answer: () => Response = () => Response.json({ id: 'j1', status: 'queued' }, { status: 202 }),
) {
  const sent: { url: string; headers: Headers; body: Uint8Array }[] = [];
  const fetch: FetchLike = async (url, init = {}) => {
    sent.push({ url, headers: new Headers(init.headers), body: new Uint8Array(await new Response(init.body ?? null).arrayBuffer()) });
    return answer();
  };
  const out: string[] = [];
  const io: Io = { stdout: (t) => void out.push(t), stderr: (t) => void out.push(t), stderrIsTty: false };
  const client = createClient({ baseUrl: 'http://api.test', apiKey: 'k', fetch });
  return { sent, out, ctx: { client, config: { baseUrl: 'http://api.test', apiKey: 'k', json: false }, values: values as never, args, io } };
}

describe('tensor files on the command line', () => {
  it('parses name=@file and name=@file:DATATYPE:SHAPE, a path with colons included', () => {
    expect(parseTensorFlag('x=@a.npy')).toEqual({ name: 'x', path: 'a.npy' });
    expect(parseTensorFlag('x=@C:/t/a.bin:FP32:1x3x224x224')).toEqual({ name: 'x', path: 'C:/t/a.bin', raw: { datatype: 'FP32', shape: [1, 3, 224, 224] } });
    expect(parseTensorFlag('x=@a.bin:INT64:scalar')).toEqual({ name: 'x', path: 'a.bin', raw: { datatype: 'INT64', shape: [] } });
    expect(() => parseTensorFlag('x=@a.bin:FP99:1')).toThrow(/FP99 is not one of/);
  });

  it('reads .npy and raw files, checking a raw file against its datatype and shape', async () => {
    const values = floats(6);
    await writeFile(join(dir, 'a.npy'), writeNpy({ datatype: 'FP32', shape: [2, 3], bytes: bytesOf(values) }));
    await writeFile(join(dir, 'a.bin'), bytesOf(values));
    expect(await readTensorFlag(`x=@${join(dir, 'a.npy')}`)).toEqual({ name: 'x', datatype: 'FP32', shape: [2, 3], data: bytesOf(values) });
    expect(await readTensorFlag(`x=@${join(dir, 'a.bin')}:FP32:2x3`)).toEqual({ name: 'x', datatype: 'FP32', shape: [2, 3], data: bytesOf(values) });
    await expect(readTensorFlag(`x=@${join(dir, 'a.bin')}:FP32:2x4`)).rejects.toThrow(/is 24 bytes; FP32 \[2, 4\] is 32/);
    await expect(readTensorFlag(`x=@${join(dir, 'a.bin')}`)).rejects.toThrow(/is not \.npy: give its datatype and shape/);
    await expect(readTensorFlag(`x=@${join(dir, 'a.npy')}:FP32:2x3`)).rejects.toThrow(/carries its datatype and shape/);
    await writeFile(
      join(dir, 'be.npy'),
      writeNpy({ datatype: 'FP32', shape: [1], bytes: new Uint8Array(4) }).map((b, i) => (i === 21 ? 0x3e : b)),
    );
    await expect(readTensorFlag(`x=@${join(dir, 'be.npy')}`)).rejects.toThrow(/big-endian/);
  });

  it('jobs submit sends tensor files binary, mixed with a JSON body file', async () => {
    const values = floats(1024);
    await writeFile(join(dir, 'big.npy'), writeNpy({ datatype: 'FP32', shape: [1, 1024], bytes: bytesOf(values) }));
    await writeFile(join(dir, 'body.json'), JSON.stringify({ inputs: [{ name: 'small', datatype: 'INT32', shape: [1], data: [3] }], metadata: { a: 'b' } }));
    const { sent, ctx } = commandContext({ model: 'm', input: [join(dir, 'body.json'), `x=@${join(dir, 'big.npy')}`] });
    expect(await jobsSubmit.run(ctx)).toBe(0);
    const parsed = parseInferRequestBody(sent[0]!.body, Number(sent[0]!.headers.get('inference-header-content-length')));
    if (!parsed.ok || parsed.value.header === null) throw new Error('not framed');
    expect(parsed.value.header).toMatchObject({ model: 'm', metadata: { a: 'b' }, inputs: [{ name: 'small' }, { name: 'x', shape: [1, 1024] }] });
    expect(parsed.value.tensors[1]).toEqual(bytesOf(values));

    const json = commandContext({ model: 'm', input: [`x=@${join(dir, 'big.npy')}`], 'binary-threshold': 'never' });
    await jobsSubmit.run(json.ctx);
    expect(json.sent[0]!.headers.get('content-type')).toBe('application/json');
  });

  it('jobs bulk reads tensor files named in a line, relative to the JSONL file', async () => {
    await writeFile(join(dir, 'r.bin'), bytesOf(floats(2048)));
    await writeFile(
      join(dir, 'jobs.jsonl'),
      `${JSON.stringify({ model: 'm', inputs: [{ name: 'x', file: 'r.bin', datatype: 'FP32', shape: [1, 2048] }] })}\n` +
        `${JSON.stringify({ model: 'm', inputs: [{ name: 'x', file: 'missing.npy' }] })}\n`,
    );
    const { sent, out, ctx } = commandContext({ file: join(dir, 'jobs.jsonl') });
    expect(await jobsBulk.run(ctx)).toBe(1);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.headers.get('content-type')).toBe('application/octet-stream');
    expect(out.join('')).toMatch(/line 2: TENSOR_FILE_INVALID .*missing\.npy/);
  });

  it('jobs get --output-dir writes each output as .npy (or raw .bin), read binary', async () => {
    const y = floats(3);
    const header = { id: 'j1', model: 'm', modelVersion: 1, status: 'succeeded', priority: 'normal', createdAt: 'now', attempts: 1 };
    const outputs = [{ name: 'y/0', datatype: 'FP32', shape: [1, 3], bytes: 12, parameters: { binary_data_size: 12 } }];
    const answer = () => {
      const json = new TextEncoder().encode(JSON.stringify({ ...header, outputs }));
      return new Response(new Blob([json, bytesOf(y)] as BlobPart[]), {
        headers: { 'content-type': 'application/octet-stream', 'inference-header-content-length': String(json.byteLength) },
      });
    };
    const { sent, out, ctx } = commandContext({ 'output-dir': join(dir, 'out') }, ['j1'], answer);
    expect(await jobsGet.run(ctx)).toBe(0);
    expect(sent[0]!.headers.get('accept')).toMatch(/^application\/octet-stream/);
    expect(readNpy(new Uint8Array(await readFile(join(dir, 'out', 'y_0.npy'))))).toEqual({ datatype: 'FP32', shape: [1, 3], bytes: bytesOf(y) });
    expect(out.join('')).toContain(`wrote ${join(dir, 'out', 'y_0.npy')}`);
    const bin = commandContext({ 'output-dir': join(dir, 'out'), format: 'bin' }, ['j1'], answer);
    await jobsGet.run(bin.ctx);
    expect(new Uint8Array(await readFile(join(dir, 'out', 'y_0.bin')))).toEqual(bytesOf(y));
  });
});
