import { decodeBase64, encodeTensorJson, type DataType, type JsonScalar } from '@inferq/contracts';

/** Above this many elements a tensor is summarised (first and last items of each dim), as numpy prints. */
export const SUMMARY_THRESHOLD = 256;
const EDGE_ITEMS = 3;

/** One value as people read it: floats to 5 significant digits, exponents for the very large and small. */
export function formatScalar(value: JsonScalar): string {
  if (typeof value !== 'number') return String(value);
  if (Number.isInteger(value) || !Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 1e6 || abs < 1e-4) return value.toExponential(3);
  return String(Number(value.toPrecision(5)));
}

/** Flat row-major values of wire tensor data: a (possibly nested) JSON array or base64 little-endian bytes. */
export function tensorValues(datatype: DataType, data: unknown): JsonScalar[] {
  if (typeof data === 'string') {
    const bytes = decodeBase64(data);
    return bytes ? encodeTensorJson(datatype, bytes) : [];
  }
  return Array.isArray(data) ? (data.flat(Infinity) as JsonScalar[]) : [];
}

export interface FormatTensorOptions {
  /** Print every value instead of a summary. */
  showAll?: boolean;
}

/**
 * Nested-bracket text of a tensor, one innermost row per line. Large tensors are
 * summarised: each dim shows its first and last items around an ellipsis.
 */
export function formatTensor(values: readonly JsonScalar[], shape: readonly number[], options: FormatTensorOptions = {}): string {
  const total = shape.reduce((n, d) => n * d, 1);
  if (values.length !== total) return `[${values.map(formatScalar).join(', ')}]`;
  if (shape.length === 0) return values.length > 0 ? formatScalar(values[0]!) : '';
  const summarise = !options.showAll && total > SUMMARY_THRESHOLD;
  const strides = shape.map((_, i) => shape.slice(i + 1).reduce((n, d) => n * d, 1));

  const render = (dim: number, offset: number): string => {
    const size = shape[dim]!;
    const indexes: Array<number | null> =
      summarise && size > 2 * EDGE_ITEMS ? [...range(0, EDGE_ITEMS), null, ...range(size - EDGE_ITEMS, size)] : range(0, size);
    if (dim === shape.length - 1) {
      return `[${indexes.map((i) => (i === null ? '…' : formatScalar(values[offset + i]!))).join(', ')}]`;
    }
    const separator = `,\n${' '.repeat(dim + 1)}`;
    return `[${indexes.map((i) => (i === null ? '…' : render(dim + 1, offset + i * strides[dim]!))).join(separator)}]`;
  };
  return render(0, 0);
}

/** True when formatTensor would leave values out unless asked to show all. */
export const isSummarised = (shape: readonly number[]): boolean =>
  shape.reduce((n, d) => n * d, 1) > SUMMARY_THRESHOLD && shape.some((d) => d > 2 * EDGE_ITEMS);

const range = (from: number, to: number): number[] => Array.from({ length: Math.max(0, to - from) }, (_, i) => from + i);
