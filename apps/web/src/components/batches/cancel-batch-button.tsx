import { useId, useState } from 'react';
import { useCancelBatch } from '../../api/mutations/batches.ts';
import { Button } from '../ui/button.tsx';
import { ErrorAlert } from '../ui/states.tsx';

/**
 * Cancels a batch after a confirmation that says what stops and what is kept. The page shows it only to keys with
 * jobs:write and only while the batch has not ended; the server refuses one that has ended meanwhile (409).
 */
export function CancelBatchButton({ batchId }: { batchId: string }) {
  const cancel = useCancelBatch();
  const [confirming, setConfirming] = useState(false);
  const titleId = useId();

  if (!confirming)
    return (
      <div className="space-y-3">
        <Button
          variant="danger"
          onClick={() => {
            cancel.reset();
            setConfirming(true);
          }}
        >
          Cancel batch
        </Button>
        {cancel.isError && <ErrorAlert error={cancel.error} />}
      </div>
    );
  return (
    <div role="alertdialog" aria-labelledby={titleId} className="max-w-md space-y-2 rounded-lg border border-slate-300 bg-white p-3 text-sm shadow-sm">
      <p id={titleId} className="font-semibold text-slate-800">
        Cancel this batch?
      </p>
      <p className="text-slate-600">
        Its requests still queued are canceled; those running finish. It then ends cancelled, with an output file of what was answered and an error file of the
        rest. This cannot be undone.
      </p>
      <div className="flex flex-wrap gap-2">
        <Button size="sm" variant="danger" disabled={cancel.isPending} onClick={() => cancel.mutate(batchId, { onSettled: () => setConfirming(false) })}>
          {cancel.isPending ? 'Canceling…' : 'Cancel batch'}
        </Button>
        <Button size="sm" variant="ghost" disabled={cancel.isPending} onClick={() => setConfirming(false)}>
          Keep running
        </Button>
      </div>
    </div>
  );
}
