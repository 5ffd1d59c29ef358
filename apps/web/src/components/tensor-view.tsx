import { useState } from 'react';
import type { DataType } from '@inferq/contracts';
import { formatBytes } from '../lib/format.ts';
import { formatTensor, isSummarised, tensorValues } from '../lib/tensor-format.ts';
import { Button } from './ui/button.tsx';

interface TensorViewProps {
  name: string;
  datatype: DataType;
  shape: readonly number[];
  bytes: number;
  /** Inline values: a JSON array or base64 bytes. */
  data: unknown;
}

/** A tensor's header and its values as nested rows, summarised when large with a "Show all" toggle. */
export function TensorView({ name, datatype, shape, bytes, data }: TensorViewProps) {
  const [showAll, setShowAll] = useState(false);
  const values = tensorValues(datatype, data);
  const summarised = isSummarised(shape);
  return (
    <div className="space-y-2">
      <p className="text-sm">
        <span className="font-mono font-semibold">{name}</span>{' '}
        <span className="text-slate-600">
          {datatype} · shape [{shape.join(', ')}] · {values.length.toLocaleString()} values · {formatBytes(bytes)}
        </span>
      </p>
      <pre
        aria-label={`Values of ${name}`}
        tabIndex={0}
        className="max-h-96 overflow-auto rounded-md bg-slate-900 p-3 font-mono text-xs leading-relaxed break-words whitespace-pre-wrap text-slate-100"
      >
        {formatTensor(values, shape, { showAll })}
      </pre>
      {summarised && (
        <Button size="sm" variant="ghost" onClick={() => setShowAll((v) => !v)} aria-expanded={showAll}>
          {showAll ? 'Show summary' : `Show all ${values.length.toLocaleString()} values`}
        </Button>
      )}
    </div>
  );
}
