import { USAGE_GROUPS } from '@inferq/contracts';
import { USAGE_RANGE_VALUES, USAGE_RANGES, type UsageGroup, type UsageView } from '../../lib/usage-report.ts';
import { EnumSelect } from '../ui/enum-select.tsx';
import { Field } from '../ui/form-controls.tsx';

const GROUP_LABELS: Record<UsageGroup, string> = { key: 'API key', model: 'Model version' };

/** The usage page's range presets and grouping. */
export function UsageViewSelect({ view, onChange }: { view: UsageView; onChange: (view: UsageView) => void }) {
  return (
    <>
      <Field label="Time range">
        {(control) => (
          <EnumSelect
            {...control}
            values={USAGE_RANGE_VALUES}
            labelOf={(range) => USAGE_RANGES[range].label}
            value={view.range}
            onChange={(range) => onChange({ ...view, range })}
          />
        )}
      </Field>
      <Field label="Group by">
        {(control) => (
          <EnumSelect
            {...control}
            values={USAGE_GROUPS}
            labelOf={(group) => GROUP_LABELS[group]}
            value={view.groupBy}
            onChange={(groupBy) => onChange({ ...view, groupBy })}
          />
        )}
      </Field>
    </>
  );
}
