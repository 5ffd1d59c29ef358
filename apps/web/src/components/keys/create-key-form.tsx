import { useState, type FormEvent } from 'react';
import { DEFAULT_KEY_WEIGHT, KEY_WEIGHT_MAX, KEY_WEIGHT_MIN, SCOPES, type Scope } from '@inferq/contracts';
import type { CreatedKey } from '@inferq/sdk';
import { fieldErrors } from '../../api/api-error.ts';
import { useCreateKey } from '../../api/mutations/keys.ts';
import { Button } from '../ui/button.tsx';
import { Card } from '../ui/card.tsx';
import { Field, Input } from '../ui/form-controls.tsx';
import { ErrorAlert } from '../ui/states.tsx';

const SCOPE_HELP: Record<Scope, string> = {
  'jobs:read': 'read jobs, models, stats and workers',
  'jobs:write': 'submit, cancel and re-submit jobs',
  'models:write': 'upload models',
  admin: 'everything, including API keys and every key’s jobs',
};
const DEFAULT_SCOPES: Scope[] = ['jobs:read', 'jobs:write'];
const WEIGHT_ERROR = `Enter a whole number from ${KEY_WEIGHT_MIN} to ${KEY_WEIGHT_MAX}.`;

/** The weight typed in, or undefined when it is not a whole number in range. */
const parseWeight = (text: string): number | undefined => {
  const weight = Number(text);
  return text.trim() !== '' && Number.isInteger(weight) && weight >= KEY_WEIGHT_MIN && weight <= KEY_WEIGHT_MAX ? weight : undefined;
};

export function CreateKeyForm({ onCreated }: { onCreated: (key: CreatedKey) => void }) {
  const create = useCreateKey();
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<Scope[]>(DEFAULT_SCOPES);
  const [weight, setWeight] = useState(String(DEFAULT_KEY_WEIGHT));
  const [nameError, setNameError] = useState<string>();
  const [weightError, setWeightError] = useState<string>();
  const toggle = (scope: Scope, on: boolean) => setScopes((s) => (on ? [...s, scope] : s.filter((x) => x !== scope)));

  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (!name.trim()) return setNameError('Enter a name that says who or what uses the key.');
    const parsedWeight = parseWeight(weight);
    if (parsedWeight === undefined) return setWeightError(WEIGHT_ERROR);
    create.mutate(
      { name: name.trim(), scopes, weight: parsedWeight },
      {
        onSuccess: (key) => {
          setName('');
          setScopes(DEFAULT_SCOPES);
          setWeight(String(DEFAULT_KEY_WEIGHT));
          onCreated(key);
        },
        onError: (err) => {
          const errors = fieldErrors(err, '/body');
          setNameError(errors.name);
          setWeightError(errors.weight);
        },
      },
    );
  };

  return (
    <Card title="Create a key">
      <form onSubmit={submit} noValidate className="space-y-4">
        <Field label="Key name" hint="For example the service or person that will use it." error={nameError} className="max-w-md">
          {(control) => (
            <Input
              {...control}
              value={name}
              maxLength={100}
              autoComplete="off"
              onChange={(e) => {
                setName(e.target.value);
                setNameError(undefined);
              }}
            />
          )}
        </Field>
        <Field
          label="Weight"
          hint={
            'Share of each model’s queue against other keys at the same priority when both have work waiting: ' +
            'weight 2 is served twice as many jobs as weight 1.'
          }
          error={weightError}
          className="max-w-md"
        >
          {(control) => (
            <Input
              {...control}
              type="number"
              min={KEY_WEIGHT_MIN}
              max={KEY_WEIGHT_MAX}
              step={1}
              value={weight}
              onChange={(e) => {
                setWeight(e.target.value);
                setWeightError(undefined);
              }}
            />
          )}
        </Field>
        <fieldset>
          <legend className="text-sm font-medium text-slate-700">Scopes</legend>
          <div className="mt-2 grid gap-2 sm:grid-cols-2">
            {SCOPES.map((scope) => (
              <label key={scope} className="flex items-start gap-2 text-sm">
                <input
                  type="checkbox"
                  className="mt-0.5 size-4 accent-brand"
                  checked={scopes.includes(scope)}
                  onChange={(e) => toggle(scope, e.target.checked)}
                />
                <span>
                  <span className="font-mono">{scope}</span> <span className="text-slate-500">— {SCOPE_HELP[scope]}</span>
                </span>
              </label>
            ))}
          </div>
        </fieldset>
        {create.isError && <ErrorAlert error={create.error} />}
        <Button type="submit" variant="primary" disabled={create.isPending}>
          {create.isPending ? 'Creating…' : 'Create key'}
        </Button>
      </form>
    </Card>
  );
}
