import { describe, expect, it } from 'vitest';
import { goalFigure, goalOverRuns, goalVerdict } from './scenario.ts';

describe('a goal over several runs', () => {
  it('takes the median as its figure, keeps the range, and says whether every run met it', () => {
    const robust = goalOverRuns('fed', [0.93, 0.91, 0.95], '>=', 0.9);
    expect(robust).toMatchObject({ value: 0.93, met: true, runs: { n: 3, min: 0.91, max: 0.95, everyMet: true } });
    expect(`${goalFigure(robust)} ${goalVerdict(robust)}`).toBe('0.93 (0.91–0.95) met in every run (3)');
    const fragile = goalOverRuns('p99', [22, 31, 24], '<=', 25, 'ms', 1);
    expect(`${goalFigure(fragile)} ${goalVerdict(fragile)}`).toBe('24 (22–31) met by the median only (3 runs)');
    expect(goalVerdict(goalOverRuns('p99', [26, 31, 24], '<=', 25))).toBe('NOT MET (3 runs)');
  });

  it('has no figure when a run read none', () => {
    expect(goalOverRuns('wal', [2000, null], '<=', 2048)).toMatchObject({ value: null, met: false });
    expect(goalVerdict(goalOverRuns('one', [1], '>=', 1))).toBe('met');
  });
});
