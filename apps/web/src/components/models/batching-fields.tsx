import { BATCHING_MODES, DEFAULT_LATENCY_TARGET_MS, type BatchingMode } from '@inferq/contracts';
import type { UploadField, UploadFields } from '../../lib/model-upload.ts';
import { EnumSelect } from '../ui/enum-select.tsx';
import { Field, Input } from '../ui/form-controls.tsx';

const BATCHING_LABELS: Record<BatchingMode, string> = {
  fixed: 'fixed: the size and delay below',
  auto: 'auto: chosen per worker within the bounds below',
};

interface BatchingFieldsProps {
  fields: UploadFields;
  errors: Partial<Record<UploadField, string>>;
  set: (patch: Partial<UploadFields>) => void;
}

/** The upload's batching: fixed numbers, or `auto` with those numbers as the bounds and a latency target. */
export function BatchingFields({ fields, errors, set }: BatchingFieldsProps) {
  const auto = fields.batching === 'auto';
  return (
    <>
      <Field label="Batching" hint="Auto: each worker measures the model on its device and picks batch size and delay." error={errors.batching}>
        {(control) => (
          <EnumSelect
            {...control}
            values={BATCHING_MODES}
            labelOf={(mode) => BATCHING_LABELS[mode]}
            value={fields.batching}
            onChange={(batching) => set({ batching })}
          />
        )}
      </Field>
      {auto && (
        <Field
          label="Latency target (ms)"
          hint={`The p99 queue wait the worker keeps under; empty for ${DEFAULT_LATENCY_TARGET_MS} ms.`}
          error={errors.latencyTargetMs}
        >
          {(control) => (
            <Input {...control} type="number" min={1} max={600000} value={fields.latencyTargetMs} onChange={(e) => set({ latencyTargetMs: e.target.value })} />
          )}
        </Field>
      )}
      <Field
        label="Max batch size"
        hint={auto ? 'Upper bound: the largest batch the worker may choose; empty for the default.' : 'Jobs per session run; empty for the default.'}
        error={errors.maxBatchSize}
      >
        {(control) => (
          <Input {...control} type="number" min={1} max={4096} value={fields.maxBatchSize} onChange={(e) => set({ maxBatchSize: e.target.value })} />
        )}
      </Field>
      <Field
        label="Max batch delay (ms)"
        hint={
          auto
            ? 'Upper bound: the longest the worker may let a batch wait to fill; empty for the default.'
            : 'How long a batch waits to fill; empty for the default.'
        }
        error={errors.maxBatchDelayMs}
      >
        {(control) => (
          <Input {...control} type="number" min={0} max={60000} value={fields.maxBatchDelayMs} onChange={(e) => set({ maxBatchDelayMs: e.target.value })} />
        )}
      </Field>
    </>
  );
}
