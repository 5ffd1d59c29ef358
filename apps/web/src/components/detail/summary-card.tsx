import type { ReactNode } from 'react';
import { Card } from '../ui/card.tsx';

interface SummaryCardProps {
  /** The record's live status, the first line of the list. */
  status: ReactNode;
  /** The record's own key/value tags, listed after its fields. */
  metadata: Readonly<Record<string, string>> | null | undefined;
  /** The record's fields: `SummaryField`s, in order. */
  children: ReactNode;
  /** What can be done with the record, under the list. */
  footer?: ReactNode;
}

/** A detail page's Summary card: status, fields and metadata as one list, then the record's actions. */
export function SummaryCard({ status, metadata, children, footer }: SummaryCardProps) {
  return (
    <Card title="Summary">
      <dl className="grid grid-cols-[auto_1fr] gap-x-4 gap-y-2 text-sm">
        <SummaryField label="Status">{status}</SummaryField>
        {children}
        {Object.entries(metadata ?? {}).map(([key, value]) => (
          <div key={key} className="contents">
            <dt className="font-mono text-slate-500">{key}</dt>
            <dd className="break-all">{value}</dd>
          </div>
        ))}
      </dl>
      {footer}
    </Card>
  );
}

/** One line of a `SummaryCard`: `className` styles the value (`font-mono` for ids and names). */
export function SummaryField({ label, className, children }: { label: string; className?: string; children: ReactNode }) {
  return (
    <>
      <dt className="text-slate-500">{label}</dt>
      <dd className={className}>{children}</dd>
    </>
  );
}
