import { JOB_STATUSES, PRIORITIES } from '@inferq/contracts';
import { useModels } from '../../api/queries/models.ts';
import { TIME_RANGES, type JobFilters, type TimeRange } from '../../lib/job-filters.ts';
import { Button } from '../ui/button.tsx';
import { Field, Input, Select } from '../ui/form-controls.tsx';

interface JobFiltersFormProps {
  filters: JobFilters;
  onChange: (filters: JobFilters) => void;
}

/** Status, model, priority and time range; each change applies at once. */
export function JobFiltersForm({ filters, onChange }: JobFiltersFormProps) {
  const models = useModels();
  const modelNames = new Set(models.data?.map((m) => m.name));
  if (filters.model) modelNames.add(filters.model);
  const set = (patch: Partial<JobFilters>) => onChange({ ...filters, ...patch });
  const isFiltered = Boolean(filters.status || filters.model || filters.priority || filters.range !== 'any');

  return (
    <form
      role="search"
      aria-label="Filter jobs"
      className="mb-4 grid grid-cols-2 items-end gap-3 sm:grid-cols-3 lg:grid-cols-6"
      onSubmit={(e) => e.preventDefault()}
    >
      <Field label="Status">
        {(control) => (
          <Select {...control} value={filters.status ?? ''} onChange={(e) => set({ status: (e.target.value || undefined) as JobFilters['status'] })}>
            <option value="">Any status</option>
            {JOB_STATUSES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </Select>
        )}
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
          <Select {...control} value={filters.priority ?? ''} onChange={(e) => set({ priority: (e.target.value || undefined) as JobFilters['priority'] })}>
            <option value="">Any priority</option>
            {PRIORITIES.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </Select>
        )}
      </Field>
      <Field label="Time range">
        {(control) => (
          <Select {...control} value={filters.range} onChange={(e) => set({ range: e.target.value as TimeRange })}>
            {Object.entries(TIME_RANGES).map(([value, { label }]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
          </Select>
        )}
      </Field>
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
