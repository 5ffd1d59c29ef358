import type { CreatedKey } from '@inferq/sdk';
import { Button } from '../ui/button.tsx';
import { CopyButton } from '../ui/copy-button.tsx';

/** The new key's secret, shown this once: the API keeps only its hash. */
export function SecretReveal({ created, onDone }: { created: CreatedKey; onDone: () => void }) {
  return (
    <section aria-labelledby="secret-heading" className="rounded-lg border border-tone-success/30 bg-tone-success/5 p-4">
      <h2 id="secret-heading" className="font-semibold text-tone-success">
        Key “{created.name}” created
      </h2>
      <p className="mt-1 text-sm text-slate-700">Copy the secret now. It is shown only once and cannot be recovered.</p>
      <div className="mt-3 flex flex-wrap items-center gap-2">
        <code aria-label="New API key secret" className="rounded bg-white px-2 py-1 font-mono text-sm break-all ring-1 ring-slate-200">
          {created.secret}
        </code>
        <CopyButton text={created.secret} label="Copy secret" />
      </div>
      <Button size="sm" variant="ghost" className="mt-3" onClick={onDone}>
        I have saved it
      </Button>
    </section>
  );
}
