import { describe, expect, it } from 'vitest';
import { AppError } from '@inferq/core';
import { ownerOfLoadFailure } from './node-faults.ts';

const s3Error = (name: string, status: number) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
const loadError = (message: string, reasons: string[]) =>
  Object.assign(new Error(message), {
    name: 'ModelLoadError',
    code: 'MODEL_LOAD_FAILED',
    failedProviders: reasons.map((reason) => ({ provider: 'cpu', reason })),
  });
const fsError = (code: string) => Object.assign(new Error(`${code}: open`), { code });

describe('ownerOfLoadFailure', () => {
  it.each([
    ['an unregistered model', new AppError('MODEL_NOT_FOUND', 'gone')],
    ['an artifact failing its checksum', new AppError('MODEL_ARTIFACT_INVALID', 'sha')],
    ['an artifact missing from S3', s3Error('NoSuchKey', 404)],
    ['a verified artifact onnxruntime cannot parse', new Error('Load model from /m.onnx failed:Protobuf parsing failed.')],
    [
      'a model no provider can open for a reason of its own',
      loadError('model /m.onnx could not be loaded on any execution provider (cpu: Protobuf parsing failed)', ['Protobuf parsing failed']),
    ],
  ])('blames the model for %s: it follows the model to every worker', (_, err) => {
    expect(ownerOfLoadFailure(err)).toBe('model');
  });

  it.each([
    ['S3 refusing the access key', s3Error('InvalidAccessKeyId', 403)],
    ['S3 refusing the signature', s3Error('SignatureDoesNotMatch', 403)],
    ['no credentials at all', Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' })],
    ['a bucket this worker names wrong', s3Error('NoSuchBucket', 404)],
    ['S3 unreachable from here', Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED', $metadata: {} })],
    ['a full disk', fsError('ENOSPC')],
    ['a cache directory it cannot make', fsError('ENOTDIR')],
    ['a cached file it cannot read', loadError('model file /c/m.onnx cannot be read: EACCES', [])],
  ])('blames the worker for %s', (_, err) => {
    expect(ownerOfLoadFailure(err)).toBe('node');
  });

  it('suspects the machine when a session fails for want of memory or a device, until a second worker fails it too', () => {
    expect(ownerOfLoadFailure(new Error('CUDA failure 2: out of memory'))).toBe('suspect');
    expect(ownerOfLoadFailure(new Error('std::bad_alloc'))).toBe('suspect');
    expect(ownerOfLoadFailure(loadError('model session thread stopped before the model loaded: exit 134', []))).toBe('suspect');
    expect(ownerOfLoadFailure(loadError('… (cuda: CUDA failure 2: out of memory; cpu: std::bad_alloc)', ['CUDA out of memory', 'std::bad_alloc']))).toBe(
      'suspect',
    );
  });
});
