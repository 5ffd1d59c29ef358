import { useId, type ComponentProps, type ReactNode } from 'react';

const controlClass =
  'block w-full rounded-md border-0 bg-white px-3 py-1.5 text-sm text-slate-900 shadow-sm ring-1 ' +
  'ring-inset ring-slate-300 placeholder:text-slate-400 focus:ring-2 focus:ring-brand aria-[invalid=true]:ring-tone-danger';

export const Input = ({ className = '', ...props }: ComponentProps<'input'>) => <input className={`${controlClass} ${className}`} {...props} />;

export const Select = ({ className = '', ...props }: ComponentProps<'select'>) => <select className={`${controlClass} pr-8 ${className}`} {...props} />;

export const Textarea = ({ className = '', ...props }: ComponentProps<'textarea'>) => (
  <textarea className={`${controlClass} font-mono text-xs ${className}`} {...props} />
);

export interface ControlProps {
  id: string;
  'aria-invalid': boolean;
  'aria-describedby': string | undefined;
}

interface FieldProps {
  label: ReactNode;
  hint?: ReactNode;
  error?: string;
  className?: string;
  children: (control: ControlProps) => ReactNode;
}

/** Ids that tie a control to its hint and error, and the hint and error themselves. */
function useFieldNotes(hint: ReactNode | undefined, error: string | undefined) {
  const id = useId();
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const control: ControlProps = { id, 'aria-invalid': Boolean(error), 'aria-describedby': [hintId, errorId].filter(Boolean).join(' ') || undefined };
  const notes = (
    <>
      {hint && (
        <p id={hintId} className="text-xs text-slate-500">
          {hint}
        </p>
      )}
      {error && (
        <p id={errorId} role="alert" className="text-xs font-medium text-tone-danger">
          {error}
        </p>
      )}
    </>
  );
  return { control, notes };
}

/** A label, its control, a hint and an inline error, wired together for assistive tech. */
export function Field({ label, hint, error, className = '', children }: FieldProps) {
  const { control, notes } = useFieldNotes(hint, error);
  return (
    <div className={`space-y-1 ${className}`}>
      <label htmlFor={control.id} className="block text-sm font-medium text-slate-700">
        {label}
      </label>
      {children(control)}
      {notes}
    </div>
  );
}

interface CheckboxFieldProps extends Omit<FieldProps, 'children'> {
  checked: boolean;
  onChange: (checked: boolean) => void;
}

/** A checkbox with its label beside it, and a hint and an inline error below. */
export function CheckboxField({ label, hint, error, className = '', checked, onChange }: CheckboxFieldProps) {
  const { control, notes } = useFieldNotes(hint, error);
  return (
    <div className={`space-y-1 ${className}`}>
      <div className="flex items-center gap-2">
        <input
          {...control}
          type="checkbox"
          checked={checked}
          onChange={(e) => onChange(e.target.checked)}
          className="size-4 rounded border-slate-300 accent-brand"
        />
        <label htmlFor={control.id} className="text-sm font-medium text-slate-700">
          {label}
        </label>
      </div>
      {notes}
    </div>
  );
}
