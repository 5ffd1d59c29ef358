import { useId, useState } from 'react';
import type { ModelRetirement } from '@inferq/contracts';
import { isInferqError } from '@inferq/sdk';
import { useRetireModelVersion } from '../../api/mutations/models.ts';
import { Button } from '../ui/button.tsx';
import { ErrorAlert } from '../ui/states.tsx';

const jobs = (n: number) => `${n} job${n === 1 ? '' : 's'}`;

/**
 * Retire one version (keys with models:write): a confirmation says what it
 * does, and a refusal because the routing table sends the version traffic
 * (409 MODEL_VERSION_ROUTED) is shown with the server's reason and an offer
 * to retire it and take it out of the table. Once retired, the row says how
 * many of its jobs are still to finish.
 */
export function RetireVersionControl({ name, version, retired }: { name: string; version: number; retired: boolean }) {
  const retire = useRetireModelVersion(name);
  const [confirming, setConfirming] = useState(false);
  const [result, setResult] = useState<ModelRetirement | null>(null);
  const titleId = useId();

  if (retired) {
    const unfinished = result?.versions.find((v) => v.version === version)?.unfinishedJobs ?? 0;
    return unfinished > 0 ? (
      <span role="status" className="text-xs text-slate-600">
        {jobs(unfinished)} still to finish
      </span>
    ) : null;
  }
  const run = (reroute: boolean) =>
    retire.mutate(
      { version, reroute },
      {
        onSuccess: (retirement) => {
          setResult(retirement);
          setConfirming(false);
        },
      },
    );
  if (!confirming)
    return (
      <Button
        size="sm"
        variant="danger"
        aria-label={`Retire v${version}`}
        title="Take no new jobs for this version"
        onClick={() => {
          retire.reset();
          setConfirming(true);
        }}
      >
        Retire
      </Button>
    );

  const routed = isInferqError(retire.error, 'MODEL_VERSION_ROUTED') ? retire.error : undefined;
  return (
    <div role="alertdialog" aria-labelledby={titleId} className="max-w-md space-y-2 rounded-lg border border-slate-300 bg-white p-3 text-sm shadow-sm">
      <p id={titleId} className="font-semibold text-slate-800">
        Retire v{version} of {name}?
      </p>
      <p className="text-slate-600">
        It takes no new jobs from now on. Jobs already queued or running finish, then its artifact is deleted. This cannot be undone.
      </p>
      {routed ? (
        <div role="alert" className="rounded-md border border-tone-danger/30 bg-tone-danger/5 p-2">
          <p className="font-semibold text-tone-danger">The routing table sends this version traffic</p>
          <p className="mt-1 text-slate-700">{routed.detail}</p>
        </div>
      ) : (
        retire.isError && <ErrorAlert error={retire.error} />
      )}
      <div className="flex flex-wrap gap-2">
        {routed ? (
          <Button size="sm" variant="danger" disabled={retire.isPending} onClick={() => run(true)}>
            {retire.isPending ? 'Retiring…' : 'Retire and take it out of routing'}
          </Button>
        ) : (
          <Button size="sm" variant="danger" disabled={retire.isPending} onClick={() => run(false)}>
            {retire.isPending ? 'Retiring…' : `Retire v${version}`}
          </Button>
        )}
        <Button size="sm" variant="ghost" disabled={retire.isPending} onClick={() => setConfirming(false)}>
          Cancel
        </Button>
      </div>
    </div>
  );
}
