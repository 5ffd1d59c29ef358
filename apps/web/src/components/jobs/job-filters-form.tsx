import { useState } from 'react';
import { JOB_STATUSES, PRIORITIES } from '@inferq/contracts';
import { useApiKeys } from '../../api/queries/keys.ts';
import { useModels } from '../../api/queries/models.ts';
import { SEARCH_FIELDS, TIME_RANGE_VALUES, TIME_RANGES, type JobFilters, type SearchField } from '../../lib/job-filters.ts';
import { Button } from '../ui/button.tsx';
import { EnumSelect } from '../ui/enum-select.tsx';
import { Field, Input, Select } from '../ui/form-controls.tsx';

interface JobFiltersFormProps {
  filters: JobFilters;
  onChange: (filters: JobFilters) => void;
  /** Admins may pick any API key's jobs; everyone else sees only their own key's. */
  isAdmin: boolean;
}

interface SearchBoxProps {
  label: string;
  field: SearchField;
  value: string | undefined;
  placeholder: string;
  invalidMessage: string;
  onApply: (value: string | undefined) => void;
  className?: string;
}

/**
 * A search box that applies on Enter or when it loses focus, not on every
 * keystroke (each applied value is a request and a URL change). A value the
 * API would refuse stays in the box with the reason beside it.
 */
function SearchBox({ label, field, value, placeholder, invalidMessage, onApply, className }: SearchBoxProps) {
  const [draft, setDraft] = useState(value ?? '');
  const [shown, setShown] = useState(value);
  const [error, setError] = useState<string>();
  // The applied value changed elsewhere (Clear filters, back button): show it.
  if (value !== shown) {
    setShown(value);
    setDraft(value ?? '');
    setError(undefined);
  }
  const apply = () => {
    const next = SEARCH_FIELDS[field](draft);
    if (draft.trim() !== '' && next === undefined) return setError(invalidMessage);
    setError(undefined);
    if (next !== value) onApply(next);
    else setDraft(value ?? '');
  };
  return (
    <Field label={label} error={error} className={className}>
      {(control) => (
        <Input
          {...control}
          type="search"
          value={draft}
          placeholder={placeholder}
          spellCheck={false}
          onChange={(e) => setDraft(e.target.value)}
          onBlur={apply}
          onKeyDown={(e) => {
            if (e.key === 'Enter') apply();
          }}
        />
      )}
    </Field>
  );
}

/** The API keys an admin may narrow the list to; the key in the URL stays listed even once revoked or unknown. */
function KeySelect({ value, onChange }: { value: string | undefined; onChange: (keyId: string | undefined) => void }) {
  const keys = useApiKeys();
  const options = (keys.data ?? []).map((k) => ({ id: k.id, label: `${k.name} (${k.prefix}…)${k.revokedAt ? ', revoked' : ''}` }));
  if (value && !options.some((o) => o.id === value)) options.push({ id: value, label: value });
  return (
    <Field label="API key">
      {(control) => (
        <Select {...control} value={value ?? ''} onChange={(e) => onChange(e.target.value || undefined)}>
          <option value="">Any key</option>
          {options.map((o) => (
            <option key={o.id} value={o.id}>
              {o.label}
            </option>
          ))}
        </Select>
      )}
    </Field>
  );
}

/** Status, model, priority, time range and (admins) API key apply at once; the search boxes (job, error, batch) on Enter or when left. */
export function JobFiltersForm({ filters, onChange, isAdmin }: JobFiltersFormProps) {
  const models = useModels();
  const modelNames = new Set(models.data?.map((m) => m.name));
  if (filters.model) modelNames.add(filters.model);
  const set = (patch: Partial<JobFilters>) => onChange({ ...filters, ...patch });
  const { status, model, priority, range, id, keyId, errorCode, errorText, batch } = filters;
  const isFiltered = Boolean(status || model || priority || range !== 'any' || id || keyId || errorCode || errorText || batch);

  return (
    <form
      role="search"
      aria-label="Filter jobs"
      className="mb-4 grid grid-cols-2 items-end gap-3 sm:grid-cols-3 lg:grid-cols-6"
      onSubmit={(e) => e.preventDefault()}
    >
      <Field label="Status">
        {(control) => <EnumSelect {...control} values={JOB_STATUSES} value={filters.status} onChange={(status) => set({ status })} anyLabel="Any status" />}
      </Field>
      <Field label="Model">
        {(control) => (
          <Select {...control} value={filters.model ?? ''} onChange={(e) => set({ model: e.target.value || undefined })}>
            <option value="">Any model</option>
            {[...modelNames].sort().map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </Select>
        )}
      </Field>
      <Field label="Priority">
        {(control) => (
          <EnumSelect {...control} values={PRIORITIES} value={filters.priority} onChange={(priority) => set({ priority })} anyLabel="Any priority" />
        )}
      </Field>
      <Field label="Time range">
        {(control) => (
          <EnumSelect
            {...control}
            values={TIME_RANGE_VALUES}
            labelOf={(range) => TIME_RANGES[range].label}
            value={filters.range}
            onChange={(range) => set({ range })}
          />
        )}
      </Field>
      {isAdmin && <KeySelect value={filters.keyId} onChange={(keyId) => set({ keyId })} />}
      <SearchBox
        label="Job id"
        field="id"
        value={filters.id}
        placeholder="0190a1b2…"
        invalidMessage="A job id, or its first digits"
        onApply={(id) => set({ id })}
      />
      <SearchBox
        label="Error code"
        field="errorCode"
        value={filters.errorCode}
        placeholder="MODEL_LOAD_FAILED"
        invalidMessage="A code such as INFERENCE_FAILED"
        onApply={(errorCode) => set({ errorCode })}
      />
      <SearchBox
        label="Error message"
        field="errorText"
        value={filters.errorText}
        placeholder="out of memory"
        invalidMessage="At most 200 characters"
        onApply={(errorText) => set({ errorText })}
        className="sm:col-span-2"
      />
      {/* Usually set by a batch's "Jobs of this batch" link; shown so it is seen, and cleared, like the others. */}
      <SearchBox
        label="Batch id"
        field="batch"
        value={filters.batch}
        placeholder="batch_…"
        invalidMessage="A Batch API batch id: batch_ and 32 hex digits"
        onApply={(batch) => set({ batch })}
        className="sm:col-span-2"
      />
      {filters.range === 'custom' && (
        <>
          <Field label="Created after">
            {(control) => (
              <Input {...control} type="datetime-local" value={filters.after ?? ''} onChange={(e) => set({ after: e.target.value || undefined })} />
            )}
          </Field>
          <Field label="Created before">
            {(control) => (
              <Input {...control} type="datetime-local" value={filters.before ?? ''} onChange={(e) => set({ before: e.target.value || undefined })} />
            )}
          </Field>
        </>
      )}
      {isFiltered && (
        <Button variant="ghost" className="justify-self-start" onClick={() => onChange({ range: 'any' })}>
          Clear filters
        </Button>
      )}
    </form>
  );
}
