import { describe, expect, it } from 'vitest';
import { inputSegmentJobIds, inputSegmentName } from '@inferq/contracts';
import { inputSegmentKey, inputSegmentOfKey, jobInputKey, jobObjectsDayPrefix, jobOutputKey, modelArtifactKey, uploadObjectKey } from './keys.ts';

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

  it("names a segment by its group's first and last job ids, files it under the first one's UTC day, and reads both back", () => {
    const [first, last] = ['019afb0f-ffff-7000-8000-00000000000a', '019afb10-0001-7abc-9000-0000000000ff'];
    const name = inputSegmentName(first, last);
    expect(name).toBe('019afb0fffff7000800000000000000a.019afb1000017abc90000000000000ff');
    expect(inputSegmentJobIds(name)).toEqual({ first, last });
    expect(inputSegmentKey(name)).toBe(`jobs/${new Date(0x019afb0fffff).toISOString().slice(0, 10)}/segments/${name}.bin`);
    expect(inputSegmentOfKey(inputSegmentKey(name))).toBe(name);
    expect(inputSegmentOfKey(`jobs/2020-01-01/segments/${name}.bin`)).toBeUndefined();
    expect(inputSegmentOfKey(jobInputKey(first, new Date(), 0))).toBeUndefined();
    expect(inputSegmentJobIds('not-a-segment')).toBeUndefined();
  });
});
