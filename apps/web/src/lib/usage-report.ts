import { USAGE_GROUPS, type Usage, type UsageQuery } from '@inferq/contracts';
import { shortId } from './format.ts';

const DAY_MS = 86_400_000;

export const USAGE_RANGES = {
  '24h': { label: 'Last 24 hours', ms: DAY_MS },
  '7d': { label: 'Last 7 days', ms: 7 * DAY_MS },
  '30d': { label: 'Last 30 days', ms: 30 * DAY_MS },
} as const;
export type UsageRange = keyof typeof USAGE_RANGES;
export const USAGE_RANGE_VALUES = Object.keys(USAGE_RANGES) as UsageRange[];
export type UsageGroup = (typeof USAGE_GROUPS)[number];

export interface UsageView {
  range: UsageRange;
  groupBy: UsageGroup;
}

const isUsageRange = (v: string | null): v is UsageRange => v !== null && Object.hasOwn(USAGE_RANGES, v);
const isUsageGroup = (v: string | null): v is UsageGroup => (USAGE_GROUPS as readonly (string | null)[]).includes(v);

/** The page's range and grouping from its URL, so a view can be shared; unknown values fall back to the defaults. */
export function usageViewFromSearchParams(params: URLSearchParams): UsageView {
  const range = params.get('range');
  const groupBy = params.get('groupBy');
  return { range: isUsageRange(range) ? range : '24h', groupBy: isUsageGroup(groupBy) ? groupBy : 'key' };
}

export const usageViewToSearchParams = ({ range, groupBy }: UsageView): URLSearchParams => new URLSearchParams({ range, groupBy });

/** The `GET /v1/usage` query: the range ends now (the API's default `to`), measured back from `nowMs`. */
export const toUsageQuery = ({ range, groupBy }: UsageView, nowMs: number): UsageQuery => ({
  from: new Date(nowMs - USAGE_RANGES[range].ms).toISOString(),
  groupBy,
});

export interface UsageRow {
  id: string;
  /** Key name or `model:version`. */
  label: string;
  /** The key id under a key's name. */
  detail?: string;
  jobs: number;
  items: number;
  deviceMs: number;
  /** Of the total device time; 0 when nothing ran. */
  share: number;
}

function rowLabel(item: Usage['items'][number]): Pick<UsageRow, 'id' | 'label' | 'detail'> {
  if (item.model !== undefined) {
    const label = `${item.model}:${item.modelVersion ?? '?'}`;
    return { id: label, label };
  }
  const keyId = item.keyId ?? 'unknown';
  return { id: keyId, label: item.keyName ?? shortId(keyId), detail: item.keyName !== undefined ? keyId : undefined };
}

/** The table's rows, largest device time first, each with its share of the total. */
export function usageRows(usage: Usage): UsageRow[] {
  const share = (deviceMs: number) => (usage.total.deviceMs > 0 ? deviceMs / usage.total.deviceMs : 0);
  return usage.items
    .map((item) => ({ ...rowLabel(item), jobs: item.jobs, items: item.items, deviceMs: item.deviceMs, share: share(item.deviceMs) }))
    .sort((a, b) => b.deviceMs - a.deviceMs);
}

export const usageTotalRow = (usage: Usage): UsageRow => ({ id: 'total', label: 'Total', ...usage.total, share: usage.total.deviceMs > 0 ? 1 : 0 });
