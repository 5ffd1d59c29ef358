import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
import { isBatchEnded, type BulkBatch } from '@inferq/sdk';
import { pollUntil } from '../poll-until.ts';
import { queryKeys } from '../query-keys.ts';
import { inferq } from '../sdk-client.ts';

// Batch API batches (`/v1/batches`), not the inference batches a worker runs (inference-batches.ts).

export const BATCHES_PAGE_SIZE = 20;
/** How often a page with a running batch is refreshed: counts move in seconds, a batch runs for minutes to hours. */
const LIST_POLL_MS = 3000;
/** How often a batch's own page polls it until it has ended. */
const BATCH_POLL_MS = 2000;

const batchListOptions = (after: string | undefined) =>
  queryOptions({
    queryKey: queryKeys.batches.list(after),
    queryFn: () => inferq().batches.page({ limit: BATCHES_PAGE_SIZE, after }),
    placeholderData: keepPreviousData,
    // Once every batch shown has ended nothing on the page can change, so polling stops.
    refetchInterval: (query) => (query.state.data?.data.some((batch) => !isBatchEnded(batch.status)) ? LIST_POLL_MS : false),
  });

const batchOptions = (id: string) =>
  queryOptions({
    queryKey: queryKeys.batches.detail(id),
    queryFn: () => inferq().batches.get(id),
    refetchInterval: pollUntil((batch: BulkBatch) => isBatchEnded(batch.status), BATCH_POLL_MS),
  });

/** One page of the key's batches, newest first; `after` is the last id of the page before. */
export const useBatchList = (after: string | undefined) => useQuery(batchListOptions(after));
/** One batch, polled until it has ended. */
export const useBatch = (id: string) => useQuery(batchOptions(id));
