import { useMutation } from '@tanstack/react-query';
import { errorSummary } from '../../api/api-error.ts';
import { downloadFile } from '../../api/file-download.ts';
import { saveBlob } from '../../lib/download.ts';
import { Button } from '../ui/button.tsx';

/** Saves one of a batch's files (output or errors) under `filename`; `label` is the button's text and name. */
export function BatchFileDownload({ fileId, filename, label }: { fileId: string; filename: string; label: string }) {
  const download = useMutation({
    mutationFn: () => downloadFile(fileId),
    onSuccess: (blob) => saveBlob(blob, filename),
  });
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <Button size="sm" onClick={() => download.mutate()} disabled={download.isPending} aria-label={label}>
        {download.isPending ? 'Downloading…' : label}
      </Button>
      {download.isError && (
        <span role="alert" className="text-xs text-tone-danger">
          {errorSummary(download.error).title}
        </span>
      )}
    </span>
  );
}
