import { RETENTION_S_MAX, RETENTION_S_MIN } from '@inferq/contracts';

// Retention periods as people write them: seconds on the wire, `7d`, `12h`, `30m`, `90s` for people (the CLI and the console).

const UNITS = [
  { suffix: 'd', seconds: 86_400 },
  { suffix: 'h', seconds: 3_600 },
  { suffix: 'm', seconds: 60 },
  { suffix: 's', seconds: 1 },
] as const;

/** The shortest exact form: 604800 → `7d`, 5400 → `90m`; null (no override) → `default`. */
export function formatRetention(seconds: number | null): string {
  if (seconds === null) return 'default';
  const unit = UNITS.find((u) => seconds % u.seconds === 0)!;
  return `${seconds / unit.seconds}${unit.suffix}`;
}

/**
 * What someone typed: a number of seconds or one with a unit (`90s`, `30m`, `12h`, `7d`); empty or `default` clears the
 * override (null). A string explains what is wrong. The bounds are the API's (RETENTION_S_MIN, RETENTION_S_MAX).
 */
export function parseRetention(text: string): { seconds: number | null } | { error: string } {
  const trimmed = text.trim().toLowerCase();
  if (trimmed === '' || trimmed === 'default') return { seconds: null };
  const match = /^(\d+)\s*([dhms]?)$/.exec(trimmed);
  if (!match) return { error: 'a number of seconds, or with a unit: 90s, 30m, 12h, 7d' };
  const unit = UNITS.find((u) => u.suffix === (match[2] || 's'))!;
  const seconds = Number(match[1]) * unit.seconds;
  if (seconds < RETENTION_S_MIN) return { error: `at least ${RETENTION_S_MIN} seconds` };
  if (seconds > RETENTION_S_MAX) return { error: `at most ${RETENTION_S_MAX.toLocaleString('en-US')} seconds` };
  return { seconds };
}
