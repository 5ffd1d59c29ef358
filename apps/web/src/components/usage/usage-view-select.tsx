import { USAGE_RANGES, type UsageGroup, type UsageRange, type UsageView } from '../../lib/usage-report.ts';
import { Field, Select } from '../ui/form-controls.tsx';

const GROUP_LABELS: Record<UsageGroup, string> = { key: 'API key', model: 'Model version' };

/** The usage page's range presets and grouping. */
export function UsageViewSelect({ view, onChange }: { view: UsageView; onChange: (view: UsageView) => void }) {
  return (
    <>
      <Field label="Time range">
        {(control) => (
          <Select {...control} value={view.range} onChange={(e) => onChange({ ...view, range: e.target.value as UsageRange })}>
            {Object.entries(USAGE_RANGES).map(([range, { label }]) => (
              <option key={range} value={range}>
                {label}
              </option>
            ))}
          </Select>
        )}
      </Field>
      <Field label="Group by">
        {(control) => (
          <Select {...control} value={view.groupBy} onChange={(e) => onChange({ ...view, groupBy: e.target.value as UsageGroup })}>
            {Object.entries(GROUP_LABELS).map(([group, label]) => (
              <option key={group} value={group}>
                {label}
              </option>
            ))}
          </Select>
        )}
      </Field>
    </>
  );
}
