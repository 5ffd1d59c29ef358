import { queryOptions, useQuery } from '@tanstack/react-query';
import type { Model } from '@inferq/contracts';
import { apiFetch } from '../client.ts';
import { queryKeys } from '../query-keys.ts';

const modelsOptions = () =>
  queryOptions({
    queryKey: queryKeys.models.list(),
    queryFn: ({ signal }) => apiFetch<{ items: Model[] }>('/v1/models', { signal }),
    select: (data) => data.items,
    staleTime: 10_000,
  });

/** One model version; `ref` is `name` (latest) or `name:version`. */
const modelOptions = (ref: string) =>
  queryOptions({
    queryKey: queryKeys.models.detail(ref),
    queryFn: ({ signal }) => apiFetch<Model>(`/v1/models/${encodeURIComponent(ref)}`, { signal }),
    staleTime: Infinity,
  });

/** The latest version of every model. */
export const useModels = () => useQuery(modelsOptions());

export const useModel = (ref: string, enabled = true) => useQuery({ ...modelOptions(ref), enabled });
