import { useState, type FormEvent, type ReactNode } from 'react';
import { formatRetention, parseRetention } from '@inferq/sdk';
import { Button } from '../ui/button.tsx';
import { Input } from '../ui/form-controls.tsx';
import { ErrorAlert } from '../ui/states.tsx';

/** What the editor needs of a retention mutation (a TanStack `useMutation` result whose variable is the seconds, null: the default). */
interface RetentionSave {
  mutate(seconds: number | null, options: { onSuccess: () => void }): void;
  isPending: boolean;
  error: Error | null;
}

interface RetentionEditorProps {
  /** What the retention is of (a key's or a model's name), for the controls' labels. */
  subject: string;
  /** The override in seconds; null: none. */
  current: number | null;
  /** Whether the Change button shows (who may set it, and whether it can still change). */
  editable: boolean;
  save: RetentionSave;
  /** What to show while not editing; the override (`7d`) or `default` unless given. */
  children?: ReactNode;
}

/**
 * A retention override and an editor for it: `7d`, `12h`, `30m`, seconds, or empty for the default; with an override set,
 * `Use default` clears it. Keys and models use it alike.
 */
export function RetentionEditor({ subject, current, editable, save, children }: RetentionEditorProps) {
  const [draft, setDraft] = useState<string>();
  const [problem, setProblem] = useState<string>();
  const store = (seconds: number | null) => save.mutate(seconds, { onSuccess: () => setDraft(undefined) });
  if (draft === undefined)
    return (
      <span className="inline-flex flex-wrap items-center gap-2">
        {children ?? <span className={current === null ? 'text-slate-500' : 'tabular-nums'}>{formatRetention(current)}</span>}
        {editable && (
          <Button
            size="sm"
            variant="ghost"
            aria-label={`Change retention of ${subject}`}
            onClick={() => setDraft(current === null ? '' : formatRetention(current))}
          >
            Change
          </Button>
        )}
      </span>
    );

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const parsed = parseRetention(draft);
    if ('error' in parsed) return setProblem(parsed.error);
    setProblem(undefined);
    store(parsed.seconds);
  };
  return (
    <form onSubmit={submit} className="space-y-1">
      <span className="inline-flex flex-wrap items-center gap-2">
        <Input
          aria-label={`Retention of ${subject}`}
          className="w-24"
          placeholder="default"
          value={draft}
          onChange={(e) => setDraft(e.target.value)}
          aria-invalid={problem !== undefined}
        />
        <Button size="sm" type="submit" disabled={save.isPending}>
          {save.isPending ? 'Saving…' : 'Save'}
        </Button>
        {current !== null && (
          <Button size="sm" variant="ghost" type="button" disabled={save.isPending} onClick={() => store(null)}>
            Use default
          </Button>
        )}
        <Button size="sm" variant="ghost" type="button" onClick={() => setDraft(undefined)}>
          Cancel
        </Button>
      </span>
      {problem && (
        <p role="alert" className="text-xs text-tone-danger">
          {problem}
        </p>
      )}
      {save.error && <ErrorAlert error={save.error} />}
    </form>
  );
}
