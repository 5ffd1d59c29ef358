import type { ReactNode } from 'react';
import { isInferqError } from '@inferq/sdk';
import { errorSummary } from '../../api/api-error.ts';
import { Button } from './button.tsx';

export function LoadingState({ label }: { label: string }) {
  return (
    <div aria-busy="true" className="flex items-center gap-3 rounded-lg border border-dashed border-slate-300 bg-white/60 p-6 text-sm text-slate-600">
      <span aria-hidden="true" className="size-4 animate-spin rounded-full border-2 border-slate-300 border-t-brand" />
      {label}
    </div>
  );
}

export function EmptyState({ title, children, action }: { title: string; children?: ReactNode; action?: ReactNode }) {
  return (
    <div className="rounded-lg border border-dashed border-slate-300 bg-white/60 px-6 py-10 text-center">
      <p className="text-sm font-semibold text-slate-800">{title}</p>
      {children && <div className="mx-auto mt-1 max-w-prose text-sm text-slate-600">{children}</div>}
      {action && <div className="mt-4 flex justify-center">{action}</div>}
    </div>
  );
}

/** An error from the API (problem+json title and detail) or elsewhere, with an optional retry. */
export function ErrorAlert({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { title, detail, code } = errorSummary(error);
  return (
    <div role="alert" className="rounded-lg border border-tone-danger/30 bg-tone-danger/5 p-4 text-sm">
      <p className="font-semibold text-tone-danger">{title}</p>
      {detail && <p className="mt-1 text-slate-700">{detail}</p>}
      {code && <p className="mt-1 font-mono text-xs text-slate-500">{code}</p>}
      {onRetry && (
        <Button size="sm" className="mt-3" onClick={onRetry}>
          Try again
        </Button>
      )}
    </div>
  );
}

/**
 * A detail page's record that could not be read: `notFound` for a 404 (or a 400: the id cannot be one, which is as
 * good as not found), else the error with a retry.
 */
export function RecordError({ error, onRetry, notFound }: { error: unknown; onRetry: () => void; notFound: ReactNode }) {
  const missing = isInferqError(error) && (error.status === 404 || error.status === 400);
  return missing ? notFound : <ErrorAlert error={error} onRetry={onRetry} />;
}
