/** No retry waits longer than this, however high the attempt. */
const MAX_DELAY_MS = 6 * 60 * 60 * 1000;

/**
 * Delay before the attempt after `attempt` (1-based): baseMs × 4^(attempt-1),
 * capped at 6 h, scaled by a random 0.8–1.2 so receivers that failed together
 * are not retried together. With a 5 s base: ~5 s, 20 s, 80 s, 5 min, 21 min, 85 min, 5.7 h.
 */
export function webhookRetryDelayMs(attempt: number, baseMs: number, random: () => number = Math.random): number {
  const delay = Math.min(MAX_DELAY_MS, baseMs * 4 ** (attempt - 1));
  return Math.round(delay * (0.8 + 0.4 * random()));
}
