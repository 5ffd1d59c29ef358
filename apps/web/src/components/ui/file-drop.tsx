import { useState, type DragEvent } from 'react';
import { formatBytes } from '../../lib/format.ts';
import type { ControlProps } from './form-controls.tsx';

interface FileDropProps {
  control: ControlProps;
  file: File | null;
  accept: string;
  /** What to drop, for the prompt: "an .onnx file". */
  what: string;
  onFile: (file: File | null) => void;
}

/** A file input inside a drop zone: drag a file onto it or use the picker. */
export function FileDrop({ control, file, accept, what, onFile }: FileDropProps) {
  const [dragging, setDragging] = useState(false);
  const onDrop = (event: DragEvent) => {
    event.preventDefault();
    setDragging(false);
    onFile(event.dataTransfer.files[0] ?? null);
  };
  return (
    <div
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
      className={`rounded-lg border-2 border-dashed p-4 text-sm transition-colors ${dragging ? 'border-brand bg-brand/5' : 'border-slate-300 bg-slate-50'}`}
    >
      <input
        {...control}
        type="file"
        accept={accept}
        onChange={(e) => onFile(e.target.files?.[0] ?? null)}
        className={[
          'block w-full text-sm',
          'file:mr-3 file:rounded-md file:border-0 file:bg-white file:px-3 file:py-1.5 file:font-medium file:shadow-sm file:ring-1 file:ring-slate-300',
        ].join(' ')}
      />
      <p className="mt-2 text-slate-600">{file ? `${file.name} · ${formatBytes(file.size)}` : `Drag and drop ${what} here, or choose one.`}</p>
    </div>
  );
}
