import { useState } from 'react';
import { useQueryClient } from '@tanstack/react-query';
import type { SubmitRequest } from '@inferq/sdk';
import { submitJob } from '../api/mutations/jobs.ts';
import { queryKeys } from '../api/query-keys.ts';
import { mapWithConcurrency } from '../lib/map-with-concurrency.ts';

export interface SubmitManyRun {
  /** Model name (no version): what the job list filters on. */
  modelName: string;
  total: number;
  accepted: number;
  rejected: number;
  /** Ids of the accepted jobs, set once every submit has settled. */
  jobIds: string[];
  firstError: unknown;
  submitting: boolean;
}

/** Sends the same job `total` times, `concurrency` requests in flight, counting accepted and rejected. */
export function useSubmitMany() {
  const queryClient = useQueryClient();
  const [run, setRun] = useState<SubmitManyRun | null>(null);

  const start = async (modelName: string, body: SubmitRequest, total: number, concurrency: number) => {
    setRun({ modelName, total, accepted: 0, rejected: 0, jobIds: [], firstError: undefined, submitting: true });
    const results = await mapWithConcurrency(total, concurrency, async () => {
      try {
        const accepted = await submitJob(body);
        setRun((r) => r && { ...r, accepted: r.accepted + 1 });
        return accepted.id;
      } catch (err) {
        setRun((r) => r && { ...r, rejected: r.rejected + 1, firstError: r.firstError ?? err });
        throw err;
      }
    });
    const jobIds = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
    setRun((r) => r && { ...r, jobIds, submitting: false });
    void queryClient.invalidateQueries({ queryKey: queryKeys.jobs.all });
  };

  return { run, start };
}
