import type { ReactNode } from 'react';
import { cva, type VariantProps } from 'class-variance-authority';

const badgeStyles = cva('inline-flex items-center gap-1.5 rounded-full px-2 py-0.5 text-xs font-medium whitespace-nowrap ring-1 ring-inset', {
  variants: {
    tone: {
      neutral: 'bg-tone-neutral/10 text-tone-neutral ring-tone-neutral/25',
      info: 'bg-tone-info/10 text-tone-info ring-tone-info/25',
      progress: 'bg-tone-progress/10 text-tone-progress ring-tone-progress/30',
      success: 'bg-tone-success/10 text-tone-success ring-tone-success/25',
      danger: 'bg-tone-danger/10 text-tone-danger ring-tone-danger/25',
      muted: 'bg-tone-muted/5 text-tone-muted ring-tone-muted/20',
    },
  },
  defaultVariants: { tone: 'neutral' },
});

export type Tone = NonNullable<VariantProps<typeof badgeStyles>['tone']>;

export function Badge({ tone, children }: { tone?: Tone; children: ReactNode }) {
  return <span className={badgeStyles({ tone })}>{children}</span>;
}
