// Display formatting for figures the API returns; null means "nothing measured yet".
import { DEFAULT_LATENCY_TARGET_MS, type AdaptiveBatching, type Batching } from '@inferq/contracts';

const DASH = '—';

export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return DASH;
  if (ms === 0) return '0 ms';
  if (ms < 1) return `${ms.toFixed(2)} ms`;
  if (ms < 1000) return `${Math.round(ms * 10) / 10} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(2)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(value < 10 ? 1 : 0)} ${units[unit]}`;
}

/** A per-second rate: two decimals below 10/s, whole numbers above. */
export const formatRate = (perSec: number): string => `${perSec < 10 ? perSec.toFixed(2) : Math.round(perSec)}/s`;

export const formatPercent = (fraction: number): string => `${(fraction * 100).toFixed(fraction > 0 && fraction < 0.01 ? 2 : 1)}%`;

export const formatNumber = (value: number | null | undefined, digits = 1): string =>
  value === null || value === undefined ? DASH : String(Math.round(value * 10 ** digits) / 10 ** digits);

export const formatDateTime = (iso: string | null | undefined): string =>
  iso ? new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'medium' }) : DASH;

export const formatClock = (iso: string): string => new Date(iso).toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });

/** A span of seconds in its largest whole unit: `[3, 'min']`. */
function coarseSpan(seconds: number): [number, string] {
  if (seconds < 60) return [seconds, 's'];
  if (seconds < 3600) return [Math.floor(seconds / 60), 'min'];
  if (seconds < 86_400) return [Math.floor(seconds / 3600), 'h'];
  return [Math.floor(seconds / 86_400), 'd'];
}

/** "5 s ago", "3 min ago", "in 2 h": coarse time relative to now. */
export function formatRelativeTime(iso: string, nowMs: number): string {
  const deltaS = Math.round((new Date(iso).getTime() - nowMs) / 1000);
  const abs = Math.abs(deltaS);
  const [value, unit] = coarseSpan(abs);
  if (abs < 2) return 'just now';
  return deltaS < 0 ? `${value} ${unit} ago` : `in ${value} ${unit}`;
}

/** "7 d", "90 min": the coarse time from one instant to a later one (a dash when either is missing). */
export function formatSpan(fromIso: string | null | undefined, toIso: string | null | undefined): string {
  if (!fromIso || !toIso) return DASH;
  const [value, unit] = coarseSpan(Math.max(0, Math.round((new Date(toIso).getTime() - new Date(fromIso).getTime()) / 1000)));
  return `${value} ${unit}`;
}

/** First and last characters of an id: job ids are time-ordered (UUIDv7), so their starts repeat within a minute. */
export const shortId = (id: string): string => `${id.slice(0, 8)}…${id.slice(-4)}`;

/** How the worker batches a model version's jobs; for `auto` the numbers are the bounds the worker chooses within. */
export function formatBatching(batchable: boolean, batching: Pick<Batching, 'maxBatchSize' | 'maxBatchDelayMs' | 'mode' | 'latencyTargetMs'>): string {
  if (!batchable) return 'not batchable (one job per run)';
  if (batching.mode !== 'auto') return `up to ${batching.maxBatchSize} jobs, waits ${batching.maxBatchDelayMs} ms`;
  return `auto ≤ ${batching.maxBatchSize} / ≤ ${batching.maxBatchDelayMs} ms, p99 ≤ ${batching.latencyTargetMs ?? DEFAULT_LATENCY_TARGET_MS} ms`;
}

/** Throughput in items per second: two decimals below 10, whole numbers with separators above. */
export const formatItemsPerS = (itemsPerS: number | null): string =>
  itemsPerS === null ? DASH : `${itemsPerS < 10 ? itemsPerS.toFixed(2) : Math.round(itemsPerS).toLocaleString()} items/s`;

/** What a worker chose for an `auto` model, in one line: "cnn: auto 32 / 4 ms, 2,900 items/s". */
export const formatAdaptiveBatching = ({ model, maxBatchSize, maxBatchDelayMs, itemsPerS }: AdaptiveBatching): string =>
  `${model}: auto ${maxBatchSize} / ${formatMs(maxBatchDelayMs)}, ${itemsPerS === null ? 'no batches measured yet' : formatItemsPerS(itemsPerS)}`;

/** An embedding model's settings in one line: "mean pooling, normalized, output last_hidden_state, ≤ 128 tokens". */
export const formatEmbedding = ({
  pooling,
  normalize,
  output,
  maxTokens,
}: {
  pooling: string;
  normalize: boolean;
  output: string;
  maxTokens: number;
}): string =>
  [
    pooling === 'none' ? 'pooled by the model' : `${pooling} pooling`,
    normalize ? 'normalized' : 'not normalized',
    `output ${output}`,
    `≤ ${maxTokens} tokens`,
  ].join(', ');

/** The start of a sha256: enough to tell artifacts apart at a glance; the full one goes in a title. */
export const shortSha256 = (sha256: string): string => sha256.slice(0, 12);
