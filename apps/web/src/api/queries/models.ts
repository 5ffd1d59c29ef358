import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

const modelsOptions = () =>
  queryOptions({ queryKey: queryKeys.models.list(), queryFn: () => inferq().models.list(), staleTime: 10_000 });

/** One model version; `ref` is `name` (latest) or `name:version`. */
const modelOptions = (ref: string) =>
  queryOptions({ queryKey: queryKeys.models.detail(ref), queryFn: () => inferq().models.get(ref), staleTime: Infinity });

/** The latest version of every model. */
export const useModels = () => useQuery(modelsOptions());

export const useModel = (ref: string, enabled = true) => useQuery({ ...modelOptions(ref), enabled });
