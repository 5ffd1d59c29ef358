import { describe, expect, it } from 'vitest';
import { parseProcStat, processTreeCpuSeconds, splitThreadCpu, threadCpuSeconds } from './process-cpu.ts';

// A real /proc/<pid>/stat line, with a command name holding a space and a parenthesis.
const STAT =
  '4242 (my (node) x) S 17 4242 4242 0 -1 4194560 1234 0 0 0 250 50 30 20 20 0 11 0 123456 1000000 5000 18446744073709551615 ' +
  '1 1 0 0 0 0 0 4096 134234626 0 0 0 17 1 0 0 0 0 0';

describe('parseProcStat', () => {
  it('reads the name, the parent and the CPU ticks counted from the last parenthesis', () => {
    expect(parseProcStat(STAT)).toEqual({ comm: 'my (node) x', ppid: 17, cpuS: 3, reapedChildrenCpuS: 0.5 });
  });
});

describe('splitThreadCpu', () => {
  it('splits into the main thread, the busiest other thread and the rest', () => {
    const before = new Map([
      [10, 1],
      [11, 2],
      [12, 0.5],
    ]);
    const after = new Map([
      [10, 1.5],
      [11, 2.1],
      [12, 3],
      [13, 0.2],
    ]);
    const split = splitThreadCpu(10, before, after);
    expect(split.main).toBeCloseTo(0.5);
    expect(split.session).toBeCloseTo(2.5);
    expect(split.other).toBeCloseTo(0.3);
  });
});

describe('readings of this process', () => {
  it('has the main thread among its threads and a tree figure at least its own', () => {
    const threads = threadCpuSeconds(process.pid);
    expect(threads.has(process.pid)).toBe(true);
    expect(processTreeCpuSeconds(process.pid)).toBeGreaterThanOrEqual(threads.get(process.pid)!);
    expect(processTreeCpuSeconds(2 ** 30)).toBeNull();
  });
});
