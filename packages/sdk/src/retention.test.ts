import { describe, expect, it } from 'vitest';
import { formatRetention, parseRetention } from './retention.ts';

describe('retention periods', () => {
  it('formats seconds in the largest exact unit', () => {
    expect(formatRetention(null)).toBe('default');
    expect(formatRetention(604_800)).toBe('7d');
    expect(formatRetention(5_400)).toBe('90m');
    expect(formatRetention(3_600)).toBe('1h');
    expect(formatRetention(61)).toBe('61s');
  });

  it('reads seconds, units and empty (the default), and refuses the rest', () => {
    expect(parseRetention('')).toEqual({ seconds: null });
    expect(parseRetention(' default ')).toEqual({ seconds: null });
    expect(parseRetention('3600')).toEqual({ seconds: 3_600 });
    expect(parseRetention('7d')).toEqual({ seconds: 604_800 });
    expect(parseRetention('12H')).toEqual({ seconds: 43_200 });
    expect(parseRetention('30m')).toEqual({ seconds: 1_800 });
    for (const bad of ['59', '1m ago', '-5', '1.5h', 'x', '3000000000']) expect(parseRetention(bad), bad).toHaveProperty('error');
  });
});
