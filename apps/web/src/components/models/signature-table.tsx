import type { TensorSpec } from '@inferq/contracts';
import { formatSpecShape } from '../../lib/tensor-form.ts';

/** A model's inputs and outputs: name, datatype and shape (? for a dynamic dim). */
export function SignatureTable({ inputs, outputs, modelName }: { inputs: readonly TensorSpec[]; outputs: readonly TensorSpec[]; modelName: string }) {
  const rows = [...inputs.map((t) => ['input', t] as const), ...outputs.map((t) => ['output', t] as const)];
  return (
    <div className="overflow-x-auto">
      <table className="min-w-full text-sm">
        <caption className="sr-only">Signature of {modelName}</caption>
        <thead>
          <tr className="text-left text-xs text-slate-500 uppercase">
            <th scope="col" className="py-1 pr-4 font-semibold">
              Tensor
            </th>
            <th scope="col" className="py-1 pr-4 font-semibold">
              Name
            </th>
            <th scope="col" className="py-1 pr-4 font-semibold">
              Datatype
            </th>
            <th scope="col" className="py-1 font-semibold">
              Shape
            </th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-100">
          {rows.map(([kind, t]) => (
            <tr key={`${kind}-${t.name}`}>
              <td className="py-1 pr-4 text-slate-500">{kind}</td>
              <td className="py-1 pr-4 font-mono">{t.name}</td>
              <td className="py-1 pr-4">{t.datatype}</td>
              <td className="py-1 font-mono">{formatSpecShape(t.shape)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
