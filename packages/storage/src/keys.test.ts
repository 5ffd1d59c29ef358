import { describe, expect, it } from 'vitest';
import { jobInputKey, jobOutputKey, modelArtifactKey } from './keys.ts';

describe('object keys', () => {
  it('puts model artifacts under name and content hash', () => {
    expect(modelArtifactKey('resnet50', 'ab12')).toBe('models/resnet50/ab12.onnx');
  });

  it("keeps each job's inputs and outputs under the job id", () => {
    expect(jobInputKey('job-1', 0)).toBe('jobs/job-1/inputs/0.bin');
    expect(jobOutputKey('job-1', 2)).toBe('jobs/job-1/outputs/2.bin');
  });
});
