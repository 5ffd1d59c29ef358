import { describe, expect, it } from 'vitest';
import { DEFAULT_PROCESS_HEAP, processHeapNodeFlags } from './process-heap.ts';

describe('processHeapNodeFlags', () => {
  it("adds V8's initial old-space size to the starter's own flags, 256 MB by default", () => {
    expect(processHeapNodeFlags(DEFAULT_PROCESS_HEAP, ['--enable-source-maps'])).toEqual(['--enable-source-maps', '--initial-old-space-size=256']);
    expect(processHeapNodeFlags({ WORKER_OLD_SPACE_INITIAL_MB: 1024 })).toEqual(['--initial-old-space-size=1024']);
  });

  it("leaves V8's sizing at 0, and a size the starter's flags already give", () => {
    expect(processHeapNodeFlags({ WORKER_OLD_SPACE_INITIAL_MB: 0 }, ['--enable-source-maps'])).toEqual(['--enable-source-maps']);
    expect(processHeapNodeFlags(DEFAULT_PROCESS_HEAP, ['--initial-old-space-size=64'])).toEqual(['--initial-old-space-size=64']);
    expect(processHeapNodeFlags(DEFAULT_PROCESS_HEAP, ['--initial-old-space-size', '64'])).toEqual(['--initial-old-space-size', '64']);
  });
});
