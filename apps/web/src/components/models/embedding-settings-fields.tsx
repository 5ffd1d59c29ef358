import { POOLINGS, type Pooling } from '@inferq/contracts';
import type { UploadField, UploadFields } from '../../lib/model-upload.ts';
import { EnumSelect } from '../ui/enum-select.tsx';
import { CheckboxField, Field, Input } from '../ui/form-controls.tsx';

const POOLING_LABELS: Record<Pooling, string> = {
  mean: 'mean: average of the real tokens',
  cls: 'cls: the first token',
  none: 'none: the model pools itself',
};

interface EmbeddingSettingsFieldsProps {
  fields: UploadFields;
  errors: Partial<Record<UploadField, string>>;
  set: (patch: Partial<UploadFields>) => void;
}

/** The upload's embedding settings, shown once a tokenizer is chosen; every one may stay at the server's default. */
export function EmbeddingSettingsFields({ fields, errors, set }: EmbeddingSettingsFieldsProps) {
  return (
    <fieldset className="grid gap-4 rounded-lg border border-slate-200 p-4 md:col-span-2 md:grid-cols-2">
      <legend className="px-1 text-sm font-semibold text-slate-700">Embedding settings</legend>
      <Field label="Pooling" hint="How token outputs become one vector per text." error={errors.pooling}>
        {(control) => (
          <EnumSelect
            {...control}
            values={POOLINGS}
            labelOf={(pooling) => POOLING_LABELS[pooling]}
            value={fields.pooling || undefined}
            onChange={(pooling) => set({ pooling: pooling ?? '' })}
            anyLabel="default: mean for [batch, seq, dim], none for [batch, dim]"
          />
        )}
      </Field>
      <CheckboxField
        label="Normalize"
        hint="Scale each embedding to unit length."
        error={errors.normalize}
        checked={fields.normalize}
        onChange={(normalize) => set({ normalize })}
      />
      <Field label="Output name" hint="Empty: last_hidden_state if the model has it, else its first output." error={errors.embeddingOutput}>
        {(control) => <Input {...control} value={fields.embeddingOutput} autoComplete="off" onChange={(e) => set({ embeddingOutput: e.target.value })} />}
      </Field>
      <Field
        label="Max tokens"
        hint="Longer texts are refused. Empty: the tokenizer's truncation length, else the model's sequence length, else 512."
        error={errors.maxTokens}
      >
        {(control) => (
          <Input {...control} type="number" min={1} max={1_000_000} value={fields.maxTokens} onChange={(e) => set({ maxTokens: e.target.value })} />
        )}
      </Field>
    </fieldset>
  );
}
