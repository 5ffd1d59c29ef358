import { formatDateTime, formatRelativeTime } from '../../lib/format.ts';
import { useNow } from '../../hooks/use-now.ts';

/** "12 s ago", ticking, with the exact time on hover and for machines. */
export function RelativeTime({ iso }: { iso: string }) {
  const now = useNow();
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatRelativeTime(iso, now)}
    </time>
  );
}
