import type { ReactNode } from 'react';

interface CardProps {
  title?: ReactNode;
  /** Heading level of the title; pages use h2 for their sections. */
  headingLevel?: 'h2' | 'h3';
  actions?: ReactNode;
  className?: string;
  children: ReactNode;
}

export function Card({ title, headingLevel: Heading = 'h2', actions, className = '', children }: CardProps) {
  return (
    <section className={`rounded-lg bg-white p-4 shadow-sm ring-1 ring-slate-200 sm:p-5 ${className}`}>
      {(title || actions) && (
        <div className="mb-3 flex flex-wrap items-center justify-between gap-2">
          {title && <Heading className="text-base font-semibold text-slate-900">{title}</Heading>}
          {actions}
        </div>
      )}
      {children}
    </section>
  );
}
