import { describe, expect, it } from 'vitest';
import { linePath, niceMax } from './chart-path.ts';

describe('niceMax', () => {
  it('rounds the largest value up to 1, 2 or 5 times a power of ten', () => {
    expect(niceMax([3, 7, null])).toBe(10);
    expect(niceMax([0.3])).toBe(0.5);
    expect(niceMax([120])).toBe(200);
    expect(niceMax([null, 0])).toBe(1);
  });
});

describe('linePath', () => {
  it('draws points across the width with y growing down', () => {
    expect(linePath([0, 5, 10], 100, 50, 10)).toBe('M0 50 L50 25 L100 0');
  });

  it('breaks the line at nulls and draws lone points as dots', () => {
    expect(linePath([1, null, 2, 2, null], 40, 10, 2)).toBe('M0 5 l0 0 M20 0 L30 0');
  });

  it('is empty when nothing was measured', () => {
    expect(linePath([null, null], 10, 10, 1)).toBe('');
  });
});
