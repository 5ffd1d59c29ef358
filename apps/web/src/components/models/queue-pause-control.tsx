import { useSetQueuePaused } from '../../api/mutations/models.ts';
import { Badge } from '../ui/badge.tsx';
import { Button } from '../ui/button.tsx';
import { errorSummary } from '../../api/api-error.ts';

/** Shown beside a model whose queue an operator has paused: jobs are accepted, none starts. */
export const PausedBadge = () => <Badge tone="danger">paused</Badge>;

/**
 * Pause or resume a model's queue (admin keys). While the request runs the
 * button says so; a refusal is shown beside it.
 */
export function QueuePauseControl({ model, paused }: { model: string; paused: boolean }) {
  const setPaused = useSetQueuePaused(model);
  const label = paused ? 'Resume queue' : 'Pause queue';
  return (
    <span className="inline-flex items-center gap-2">
      <Button
        size="sm"
        variant={paused ? 'primary' : 'danger'}
        aria-label={`${label} of ${model}`}
        title={paused ? 'Let workers start its queued jobs again' : 'Keep accepting jobs but start none until resumed'}
        disabled={setPaused.isPending}
        onClick={() => setPaused.mutate(!paused)}
      >
        {setPaused.isPending ? (paused ? 'Resuming…' : 'Pausing…') : label}
      </Button>
      {setPaused.isError && (
        <span role="alert" className="text-xs text-tone-danger">
          {errorSummary(setPaused.error).title}
        </span>
      )}
    </span>
  );
}
