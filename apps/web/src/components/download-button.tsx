import { useMutation } from '@tanstack/react-query';
import { errorSummary } from '../api/api-error.ts';
import { downloadTensor } from '../api/tensor-download.ts';
import { saveBlob } from '../lib/download.ts';
import { Button } from './ui/button.tsx';

interface DownloadButtonProps {
  /** API path of the raw bytes, e.g. `/v1/jobs/:id/outputs/0`. */
  path: string;
  filename: string;
  /** Accessible name, e.g. "Download output logits". */
  label: string;
}

/** Fetches authenticated bytes and saves them; a plain link could not send the API key. */
export function DownloadButton({ path, filename, label }: DownloadButtonProps) {
  const download = useMutation({
    mutationFn: () => downloadTensor(path),
    onSuccess: (blob) => saveBlob(blob, filename),
  });
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <Button size="sm" onClick={() => download.mutate()} disabled={download.isPending} aria-label={label}>
        {download.isPending ? 'Downloading…' : 'Download'}
      </Button>
      {download.isError && (
        <span role="alert" className="text-xs text-tone-danger">
          {errorSummary(download.error).title}
        </span>
      )}
    </span>
  );
}
