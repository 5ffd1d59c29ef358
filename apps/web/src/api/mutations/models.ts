import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { Model } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

export interface ModelUpload {
  name: string;
  file: File;
  maxBatchSize?: number;
  maxBatchDelayMs?: number;
}

function toFormData(upload: ModelUpload): FormData {
  const form = new FormData();
  form.set('name', upload.name);
  if (upload.maxBatchSize !== undefined) form.set('maxBatchSize', String(upload.maxBatchSize));
  if (upload.maxBatchDelayMs !== undefined) form.set('maxBatchDelayMs', String(upload.maxBatchDelayMs));
  // The file goes last so the server has the text fields before it streams the bytes.
  form.set('file', upload.file, upload.file.name);
  return form;
}

/** Registers an ONNX file as the next version of its name. */
export function useUploadModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (upload: ModelUpload) => apiFetch<Model>('/v1/models', { method: 'POST', body: toFormData(upload) }),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.models.all }),
  });
}
