import { Field, Select } from '../ui/form-controls.tsx';

const WINDOWS = [
  [15, 'Last 15 minutes'],
  [60, 'Last hour'],
  [360, 'Last 6 hours'],
] as const;

export const DEFAULT_STATS_WINDOW_MINUTES = 15;

/** Which stretch of finished jobs the stats cover. */
export function StatsWindowSelect({ windowMinutes, onChange }: { windowMinutes: number; onChange: (windowMinutes: number) => void }) {
  return (
    <Field label="Window">
      {(control) => (
        <Select {...control} value={windowMinutes} onChange={(e) => onChange(Number(e.target.value))}>
          {WINDOWS.map(([minutes, label]) => (
            <option key={minutes} value={minutes}>
              {label}
            </option>
          ))}
        </Select>
      )}
    </Field>
  );
}
