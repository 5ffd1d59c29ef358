import { useMutation } from '@tanstack/react-query';
import { errorSummary } from '../api/api-error.ts';
import { saveBlob } from '../lib/download.ts';
import { Button } from './ui/button.tsx';

interface DownloadButtonProps {
  /** Reads the bytes with the API key (a plain link could not send it), e.g. `() => downloadTensor(path)`. */
  fetchBlob: () => Promise<Blob>;
  filename: string;
  /** Accessible name, e.g. "Download output logits". */
  label: string;
  /** The button's text. @default 'Download' */
  text?: string;
}

/** Fetches authenticated bytes and saves them under `filename`; a failure is said beside the button. */
export function DownloadButton({ fetchBlob, filename, label, text = 'Download' }: DownloadButtonProps) {
  const download = useMutation({
    mutationFn: fetchBlob,
    onSuccess: (blob) => saveBlob(blob, filename),
  });
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <Button size="sm" onClick={() => download.mutate()} disabled={download.isPending} aria-label={label}>
        {download.isPending ? 'Downloading…' : text}
      </Button>
      {download.isError && (
        <span role="alert" className="text-xs text-tone-danger">
          {errorSummary(download.error).title}
        </span>
      )}
    </span>
  );
}
