import { useState } from 'react';
import { Button } from './button.tsx';

/** Copies `text` to the clipboard and says so for a moment. */
export function CopyButton({ text, label }: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(text);
      setState('copied');
    } catch {
      setState('failed');
    }
    setTimeout(() => setState('idle'), 2000);
  };
  return (
    <Button size="sm" onClick={() => void copy()} aria-label={label}>
      {state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select and copy by hand' : 'Copy'}
    </Button>
  );
}

/** An id as a detail page's header shows it: in full, monospace, with a button that copies it (`label`, e.g. "Copy job id"). */
export function CopyableId({ id, label }: { id: string; label: string }) {
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <span className="font-mono break-all">{id}</span>
      <CopyButton text={id} label={label} />
    </span>
  );
}
