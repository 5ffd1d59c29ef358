import type { TensorDraft } from '../../lib/tensor-drafts.ts';
import { formatBytes } from '../../lib/format.ts';
import { formatSpecShape } from '../../lib/tensor-form.ts';
import { Button } from '../ui/button.tsx';
import { FileDrop } from '../ui/file-drop.tsx';
import { Field, Input, Textarea } from '../ui/form-controls.tsx';

interface TensorInputProps {
  draft: TensorDraft;
  onResize: (dim: number, size: number) => void;
  onEditText: (text: string) => void;
  /** A dropped or picked tensor file (.npy, or raw little-endian bytes); null goes back to typed values. */
  onFile: (file: File | null) => void;
}

/** One model input: its dynamic dims as numbers and its values as JSON, or a tensor file. */
export function TensorInput({ draft, onResize, onEditText, onFile }: TensorInputProps) {
  const dynamicDims = draft.specShape.flatMap((d, i) => (d === -1 ? [i] : []));
  const count = draft.shape.reduce((n, d) => n * d, 1);
  const { file } = draft;
  return (
    <fieldset className="space-y-3 rounded-lg border border-slate-200 p-4">
      <legend className="px-1 text-sm">
        <span className="font-mono font-semibold">{draft.name}</span>{' '}
        <span className="text-slate-600">
          {draft.datatype} · signature {formatSpecShape(draft.specShape)} · sending [{(file?.shape ?? draft.shape).join(', ')}]
        </span>
      </legend>
      {!file && dynamicDims.length > 0 && (
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
      {file ? (
        <div className="flex flex-wrap items-center justify-between gap-2 rounded-md bg-slate-50 px-3 py-2 text-sm" aria-label={`${draft.name} file`}>
          <span>
            <span className="font-mono">{file.fileName}</span> · {formatBytes(file.size)} · {file.datatype} [{file.shape.join(', ')}]
          </span>
          <Button size="sm" onClick={() => onFile(null)}>
            Use typed values
          </Button>
        </div>
      ) : (
        <Field label={`${draft.name} values`} hint={`${count.toLocaleString()} values, row-major, as a flat or nested JSON array.`} error={draft.error}>
          {(control) => <Textarea {...control} rows={4} spellCheck={false} value={draft.text} onChange={(e) => onEditText(e.target.value)} />}
        </Field>
      )}
      <Field
        label={`${draft.name} file`}
        hint="Or a tensor file: .npy (its datatype and shape are checked against the signature), or raw little-endian bytes (.bin)."
        error={draft.fileError ?? (file ? draft.error : undefined)}
      >
        {(control) => <FileDrop control={control} file={null} accept=".npy,.bin,.raw,application/octet-stream" what="a .npy or .bin file" onFile={onFile} />}
      </Field>
    </fieldset>
  );
}
