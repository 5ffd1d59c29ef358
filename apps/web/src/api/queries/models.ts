import { queryOptions, useQuery } from '@tanstack/react-query';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

const modelsOptions = () => queryOptions({ queryKey: queryKeys.models.list(), queryFn: () => inferq().models.list(), staleTime: 10_000 });

/** One model version; `ref` is `name` (latest) or `name:version`. */
const modelOptions = (ref: string) => queryOptions({ queryKey: queryKeys.models.detail(ref), queryFn: () => inferq().models.get(ref), staleTime: Infinity });

const modelRoutingOptions = (name: string) =>
  queryOptions({ queryKey: queryKeys.models.routing(name), queryFn: () => inferq().models.getRouting(name), staleTime: 10_000 });

/** The latest version of every model. */
export const useModels = () => useQuery(modelsOptions());

export const useModel = (ref: string, enabled = true) => useQuery({ ...modelOptions(ref), enabled });

/** Every version of `name`, newest first; fetched again when the latest version changes (an upload). */
export const useModelVersions = (name: string, latestVersion: number) =>
  useQuery({ queryKey: queryKeys.models.versions(name, latestVersion), queryFn: () => inferq().models.versions(name), staleTime: Infinity });

export const useModelRouting = (name: string) => useQuery(modelRoutingOptions(name));
