import type { ModelRoute } from '@inferq/contracts';

/**
 * The routing editor's weight inputs, by version. An empty input leaves the
 * version out of the table; "0" keeps it there with no traffic (as the API does).
 */
export type RoutingDraft = Readonly<Record<number, string>>;

/** The API's bound on one weight (contracts ModelRouteInputSchema). */
const MAX_WEIGHT = 1_000_000;
const PROMOTED_WEIGHT = '100';

export const draftFromRoutes = (routes: readonly ModelRoute[]): RoutingDraft => Object.fromEntries(routes.map((r) => [r.version, String(r.weight)]));

/** Every unversioned job to `version`: the others leave the table. */
export const promoteDraft = (version: number): RoutingDraft => ({ [version]: PROMOTED_WEIGHT });

type ParsedDraft = { ok: true; routes: ModelRoute[] } | { ok: false; errors: Record<number, string> };

/** The table to PUT, by version; whole-number checks only, the server judges the rest (registered versions, a weight above 0). */
export function parseRoutingDraft(draft: RoutingDraft): ParsedDraft {
  const routes: ModelRoute[] = [];
  const errors: Record<number, string> = {};
  for (const [key, raw] of Object.entries(draft)) {
    const text = raw.trim();
    if (text === '') continue;
    const weight = Number(text);
    if (!/^\d+$/.test(text) || weight > MAX_WEIGHT) errors[Number(key)] = `a whole number from 0 to ${MAX_WEIGHT.toLocaleString('en')}`;
    else routes.push({ version: Number(key), weight });
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return { ok: true, routes: routes.sort((a, b) => a.version - b.version) };
}

/** Each version's fraction of unversioned traffic: weight ÷ sum of weights (0 for all when no weight is above 0). */
export function routeShares(routes: readonly ModelRoute[]): Map<number, number> {
  const total = routes.reduce((sum, r) => sum + r.weight, 0);
  return new Map(routes.map((r) => [r.version, total > 0 ? r.weight / total : 0]));
}

export const isSameRouting = (a: readonly ModelRoute[], b: readonly ModelRoute[]): boolean => {
  const key = (routes: readonly ModelRoute[]) =>
    [...routes]
      .sort((x, y) => x.version - y.version)
      .map((r) => `${r.version}=${r.weight}`)
      .join(',');
  return key(a) === key(b);
};
