import { useState, type FormEvent } from 'react';
import { isInferqError } from '@inferq/sdk';
import { fieldErrors } from '../../api/api-error.ts';
import { useUploadModel } from '../../api/mutations/models.ts';
import { EMPTY_UPLOAD, isUploadField, modelNameFromFile, toModelUpload, validateUpload, type UploadField, type UploadFields } from '../../lib/model-upload.ts';
import { Button } from '../ui/button.tsx';
import { Card } from '../ui/card.tsx';
import { CheckboxField, Field, Input } from '../ui/form-controls.tsx';
import { ErrorAlert } from '../ui/states.tsx';
import { BatchingFields } from './batching-fields.tsx';
import { EmbeddingSettingsFields } from './embedding-settings-fields.tsx';
import { FileDrop } from '../ui/file-drop.tsx';

/** Problems about the file itself: shown beside it when the API names no field. */
const FILE_PROBLEMS = new Set(['MODEL_INVALID', 'MODEL_UNSUPPORTED', 'PAYLOAD_TOO_LARGE']);

/** Registers an ONNX file; the API's validation errors show beside the field they concern. */
export function UploadModelForm() {
  const upload = useUploadModel();
  const [fields, setFields] = useState<UploadFields>(EMPTY_UPLOAD);
  const [errors, setErrors] = useState<Partial<Record<UploadField, string>>>({});
  const [formVersion, setFormVersion] = useState(0);
  const set = (patch: Partial<UploadFields>) => {
    upload.reset();
    setFields((f) => ({ ...f, ...patch }));
    setErrors((e) => ({ ...e, ...Object.fromEntries(Object.keys(patch).map((k) => [k, undefined])) }));
  };

  const submit = (event: FormEvent) => {
    event.preventDefault();
    const found = validateUpload(fields);
    setErrors(found);
    if (Object.keys(found).length > 0 || !fields.file) return;
    upload.mutate(toModelUpload({ ...fields, file: fields.file }), {
      onSuccess: () => {
        setFields(EMPTY_UPLOAD);
        setFormVersion((v) => v + 1);
      },
      onError: (err) => {
        // Form field names are the API's, so `/body/pooling` lands beside Pooling and `/body/latencyTargetMs`
        // beside Latency target; a pointer to no field leaves the alert.
        const server: Partial<Record<UploadField, string>> = Object.fromEntries(
          Object.entries(fieldErrors(err, '/body')).filter(([field]) => isUploadField(field)),
        );
        if (Object.keys(server).length === 0 && isInferqError(err) && FILE_PROBLEMS.has(err.code)) server.file = err.detail ?? err.title;
        setErrors(server);
      },
    });
  };

  return (
    <Card title="Upload a model">
      <form key={formVersion} onSubmit={submit} noValidate className="grid gap-4 md:grid-cols-2">
        <Field label="Model name" hint="Lowercase letters, digits, “.”, “_” and “-”. An existing name gets a new version." error={errors.name}>
          {(control) => <Input {...control} value={fields.name} autoComplete="off" onChange={(e) => set({ name: e.target.value })} />}
        </Field>
        <Field label="ONNX file" error={errors.file}>
          {(control) => (
            <FileDrop
              control={control}
              file={fields.file}
              accept=".onnx"
              what="an .onnx file"
              onFile={(file) => set({ file, ...(file && !fields.name ? { name: modelNameFromFile(file.name) } : {}) })}
            />
          )}
        </Field>
        <BatchingFields fields={fields} errors={errors} set={set} />
        <CheckboxField
          label="Response cache"
          hint="Equal inputs are answered from an earlier job's stored result without running the model; deterministic models only."
          error={errors.responseCache}
          checked={fields.responseCache}
          onChange={(responseCache) => set({ responseCache })}
        />
        <Field
          label="Tokenizer (tokenizer.json)"
          hint="Optional: an encoder uploaded with its Hugging Face tokenizer serves POST /v1/embeddings."
          error={errors.tokenizer}
        >
          {(control) => (
            <FileDrop
              control={control}
              file={fields.tokenizer}
              accept=".json,application/json"
              what="a tokenizer.json file"
              onFile={(tokenizer) => set({ tokenizer })}
            />
          )}
        </Field>
        {fields.tokenizer && <EmbeddingSettingsFields fields={fields} errors={errors} set={set} />}
        <div className="space-y-3 md:col-span-2">
          {upload.isError && Object.values(errors).every((e) => !e) && <ErrorAlert error={upload.error} />}
          {upload.isSuccess && (
            <p className="text-sm text-tone-success">
              Registered {upload.data.name} version {upload.data.version}.
            </p>
          )}
          <Button type="submit" variant="primary" disabled={upload.isPending}>
            {upload.isPending ? 'Uploading…' : 'Upload'}
          </Button>
        </div>
      </form>
    </Card>
  );
}
