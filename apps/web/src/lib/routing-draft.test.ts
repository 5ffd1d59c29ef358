import { describe, expect, it } from 'vitest';
import { draftFromRoutes, isSameRouting, parseRoutingDraft, promoteDraft, routeShares } from './routing-draft.ts';

describe('routing drafts', () => {
  it('round-trips a table, leaving empty inputs out and keeping weight 0', () => {
    const draft = {
      ...draftFromRoutes([
        { version: 2, weight: 90 },
        { version: 1, weight: 10 },
      ]),
      3: '',
      4: ' 0 ',
    };
    expect(parseRoutingDraft(draft)).toEqual({
      ok: true,
      routes: [
        { version: 1, weight: 10 },
        { version: 2, weight: 90 },
        { version: 4, weight: 0 },
      ],
    });
  });

  it('refuses weights that are not whole numbers within the API bound, naming the version', () => {
    expect(parseRoutingDraft({ 1: '1.5', 2: '-3', 3: '2000000', 4: '5' })).toEqual({
      ok: false,
      errors: { 1: expect.any(String), 2: expect.any(String), 3: expect.any(String) },
    });
  });

  it('promotes one version alone, and an empty draft is the empty table', () => {
    expect(parseRoutingDraft(promoteDraft(3))).toEqual({ ok: true, routes: [{ version: 3, weight: 100 }] });
    expect(parseRoutingDraft({})).toEqual({ ok: true, routes: [] });
  });

  it('gives each version weight ÷ total, and nothing when every weight is 0', () => {
    expect(
      routeShares([
        { version: 1, weight: 1 },
        { version: 2, weight: 3 },
      ]),
    ).toEqual(
      new Map([
        [1, 0.25],
        [2, 0.75],
      ]),
    );
    expect(routeShares([{ version: 1, weight: 0 }])).toEqual(new Map([[1, 0]]));
  });

  it('compares tables regardless of order', () => {
    expect(
      isSameRouting(
        [
          { version: 2, weight: 5 },
          { version: 1, weight: 5 },
        ],
        [
          { version: 1, weight: 5 },
          { version: 2, weight: 5 },
        ],
      ),
    ).toBe(true);
    expect(isSameRouting([{ version: 1, weight: 5 }], [{ version: 1, weight: 6 }])).toBe(false);
  });
});
