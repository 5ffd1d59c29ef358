import { useMutation, useQueryClient } from '@tanstack/react-query';
import type { ModelUpload } from '@inferq/sdk';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

/** Registers an ONNX file as the next version of its name. */
export function useUploadModel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (upload: ModelUpload) => inferq().models.upload(upload),
    onSuccess: () => queryClient.invalidateQueries({ queryKey: queryKeys.models.all }),
  });
}
