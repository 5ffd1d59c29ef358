import { EnumSelect } from '../ui/enum-select.tsx';
import { Field } from '../ui/form-controls.tsx';

/** Each window's length in minutes, and what the picker calls it. */
const WINDOWS = new Map([
  [15, 'Last 15 minutes'],
  [60, 'Last hour'],
  [360, 'Last 6 hours'],
]);
const WINDOW_MINUTES = [...WINDOWS.keys()];

export const DEFAULT_STATS_WINDOW_MINUTES = 15;

/** Which stretch of finished jobs the stats cover. */
export function StatsWindowSelect({ windowMinutes, onChange }: { windowMinutes: number; onChange: (windowMinutes: number) => void }) {
  return (
    <Field label="Window">
      {(control) => <EnumSelect {...control} values={WINDOW_MINUTES} labelOf={(minutes) => WINDOWS.get(minutes)} value={windowMinutes} onChange={onChange} />}
    </Field>
  );
}
