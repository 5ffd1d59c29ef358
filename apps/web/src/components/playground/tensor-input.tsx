import type { TensorDraft } from '../../lib/tensor-drafts.ts';
import { formatSpecShape } from '../../lib/tensor-form.ts';
import { Field, Input, Textarea } from '../ui/form-controls.tsx';

interface TensorInputProps {
  draft: TensorDraft;
  onResize: (dim: number, size: number) => void;
  onEditText: (text: string) => void;
}

/** One model input: its dynamic dims as numbers and its values as JSON. */
export function TensorInput({ draft, onResize, onEditText }: TensorInputProps) {
  const dynamicDims = draft.specShape.flatMap((d, i) => (d === -1 ? [i] : []));
  const count = draft.shape.reduce((n, d) => n * d, 1);
  return (
    <fieldset className="space-y-3 rounded-lg border border-slate-200 p-4">
      <legend className="px-1 text-sm">
        <span className="font-mono font-semibold">{draft.name}</span>{' '}
        <span className="text-slate-600">
          {draft.datatype} · signature {formatSpecShape(draft.specShape)} · sending [{draft.shape.join(', ')}]
        </span>
      </legend>
      {dynamicDims.length > 0 && (
        <div className="flex flex-wrap gap-3">
          {dynamicDims.map((dim) => (
            <Field key={dim} label={`${draft.name} dimension ${dim}`} className="w-40">
              {(control) => (
                <Input
                  {...control}
                  type="number"
                  min={1}
                  step={1}
                  value={draft.shape[dim]}
                  onChange={(e) => onResize(dim, Math.max(0, Math.floor(Number(e.target.value) || 0)))}
                />
              )}
            </Field>
          ))}
        </div>
      )}
      <Field label={`${draft.name} values`} hint={`${count.toLocaleString()} values, row-major, as a flat or nested JSON array.`} error={draft.error}>
        {(control) => <Textarea {...control} rows={4} spellCheck={false} value={draft.text} onChange={(e) => onEditText(e.target.value)} />}
      </Field>
    </fieldset>
  );
}
