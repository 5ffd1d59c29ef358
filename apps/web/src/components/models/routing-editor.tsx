import { useState, type FormEvent } from 'react';
import type { ModelRoute } from '@inferq/contracts';
import { useSetModelRouting } from '../../api/mutations/models.ts';
import { formatPercent } from '../../lib/format.ts';
import { draftFromRoutes, isSameRouting, parseRoutingDraft, promoteDraft, routeShares, type RoutingDraft } from '../../lib/routing-draft.ts';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { Input } from '../ui/form-controls.tsx';
import { ErrorAlert } from '../ui/states.tsx';
import { NoRoutingNote } from './routing-table.tsx';

interface RoutingEditorProps {
  name: string;
  /** Registered versions, newest first. */
  versions: readonly number[];
  /** The table as the server has it. */
  saved: readonly ModelRoute[];
}

const cellClass = 'px-3 py-2 text-left align-middle';

/**
 * A weight per version; Promote and Remove fill the draft, Save sends it.
 * Nothing changes on the server until Save, so a mis-click costs nothing.
 */
export function RoutingEditor({ name, versions, saved }: RoutingEditorProps) {
  // null: show the saved table (and follow it when it changes); an object: the operator's edits.
  const [draft, setDraft] = useState<RoutingDraft | null>(null);
  const setRouting = useSetModelRouting(name);
  const shown = draft ?? draftFromRoutes(saved);
  const parsed = parseRoutingDraft(shown);
  const errors = parsed.ok ? {} : parsed.errors;
  const dirty = !parsed.ok || !isSameRouting(parsed.routes, saved);
  const shares = parsed.ok ? routeShares(parsed.routes) : new Map<number, number>();
  const latestVersion = versions[0] ?? 0;

  const edit = (next: RoutingDraft | null) => {
    setDraft(next);
    setRouting.reset();
  };
  const save = (event: FormEvent) => {
    event.preventDefault();
    if (parsed.ok) setRouting.mutate(parsed.routes, { onSuccess: () => setDraft(null) });
  };

  return (
    <form onSubmit={save} noValidate className="space-y-3">
      <p className="text-sm text-slate-600">
        Jobs that name <span className="font-mono">{name}</span> without a version go to each version in proportion to its weight. Leave a weight empty to take
        the version out of the table; 0 keeps it there with no traffic.
      </p>
      <div className="overflow-x-auto rounded-lg ring-1 ring-slate-200">
        <table className="min-w-full divide-y divide-slate-200 text-sm">
          <caption className="sr-only">Routing weights</caption>
          <thead className="bg-slate-50 text-xs font-semibold tracking-wide text-slate-600 uppercase">
            <tr>
              <th scope="col" className={cellClass}>
                Version
              </th>
              <th scope="col" className={cellClass}>
                Weight
              </th>
              <th scope="col" className={`${cellClass} text-right`}>
                Share
              </th>
              <th scope="col" className={cellClass}>
                <span className="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody className="divide-y divide-slate-100">
            {versions.map((version) => (
              <tr key={version}>
                <th scope="row" className={`${cellClass} font-mono font-normal`}>
                  <span className="inline-flex items-center gap-2">
                    v{version}
                    {version === latestVersion && <Badge>latest</Badge>}
                  </span>
                </th>
                <td className={cellClass}>
                  <div className="w-28">
                    <Input
                      type="number"
                      min={0}
                      step={1}
                      inputMode="numeric"
                      aria-label={`Weight of v${version}`}
                      aria-invalid={Boolean(errors[version])}
                      value={shown[version] ?? ''}
                      onChange={(e) => edit({ ...shown, [version]: e.target.value })}
                    />
                  </div>
                  {errors[version] && (
                    <p role="alert" className="mt-1 text-xs font-medium text-tone-danger">
                      Weight of v{version}: {errors[version]}
                    </p>
                  )}
                </td>
                <td className={`${cellClass} text-right tabular-nums`} aria-label={`Share of v${version}`}>
                  {shares.has(version) ? formatPercent(shares.get(version)!) : <span className="text-slate-400">not routed</span>}
                </td>
                <td className={cellClass}>
                  <Button size="sm" onClick={() => edit(promoteDraft(version))}>
                    Promote v{version}
                  </Button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {parsed.ok && parsed.routes.length === 0 && <NoRoutingNote latestVersion={latestVersion} />}
      {setRouting.isError && <ErrorAlert error={setRouting.error} />}
      <div className="flex flex-wrap items-center gap-2">
        <Button type="submit" variant="primary" disabled={!dirty || !parsed.ok || setRouting.isPending}>
          {setRouting.isPending ? 'Saving…' : 'Save routing'}
        </Button>
        <Button variant="danger" disabled={Object.values(shown).every((w) => w.trim() === '')} onClick={() => edit({})}>
          Remove routing
        </Button>
        {draft !== null && dirty && (
          <Button variant="ghost" onClick={() => edit(null)}>
            Discard changes
          </Button>
        )}
        <p role="status" className="text-sm text-slate-600">
          {dirty ? 'Unsaved changes' : setRouting.isSuccess ? 'Routing saved' : ''}
        </p>
      </div>
    </form>
  );
}
