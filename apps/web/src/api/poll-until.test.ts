import { describe, expect, it } from 'vitest';
import { pollUntil } from './poll-until.ts';

describe('pollUntil', () => {
  const interval = pollUntil((status: string) => status === 'done', 1000);

  it('polls while there is no data yet or the record can still change', () => {
    expect(interval({ state: { data: undefined } })).toBe(1000);
    expect(interval({ state: { data: 'running' } })).toBe(1000);
  });

  it('stops once the record has finished', () => {
    expect(interval({ state: { data: 'done' } })).toBe(false);
  });
});
