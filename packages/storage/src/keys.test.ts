import { describe, expect, it } from 'vitest';
import { jobInputKey, jobObjectsDayPrefix, jobOutputKey, modelArtifactKey, uploadObjectKey } from './keys.ts';

describe('object keys', () => {
  it('puts model artifacts under name and content hash', () => {
    expect(modelArtifactKey('resnet50', 'ab12')).toBe('models/resnet50/ab12.onnx');
  });

  it("keeps each job's inputs and outputs under the UTC day it was submitted, then the job id", () => {
    const at = new Date('2026-11-25T23:59:59.999+00:00');
    expect(jobInputKey('job-1', at, 0)).toBe('jobs/2026-11-25/job-1/inputs/0.bin');
    expect(jobOutputKey('job-1', at, 'batch-1', 2)).toBe('jobs/2026-11-25/job-1/outputs/batch-1/2.bin');
    expect(jobObjectsDayPrefix(new Date('2026-11-26T00:30:00+01:00'))).toBe('jobs/2026-11-25/');
  });

  it("keeps a client's upload under uploads/, by the UTC day it was created", () => {
    expect(uploadObjectKey('u-1', new Date('2026-11-26T00:30:00+01:00'))).toBe('uploads/2026-11-25/u-1.bin');
  });
});
