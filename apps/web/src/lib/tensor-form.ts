import { decodeTensorData, elementCount, type DataType, type JsonScalar } from '@inferq/contracts';

/** Largest tensor the playground form edits as JSON text; bigger ones belong in an API client with base64. */
export const MAX_FORM_ELEMENTS = 262_144;

export type FillKind = 'zeros' | 'random';

export type ParseResult = { ok: true; data: unknown[] } | { ok: false; message: string };

/** A signature shape with its dynamic dims (−1) set to 1, the form's starting point. */
export const initialShape = (specShape: readonly number[]): number[] => specShape.map((d) => (d === -1 ? 1 : d));

/** `[?, 64]`: a signature shape as people read it. */
export const formatSpecShape = (specShape: readonly number[]): string => `[${specShape.map((d) => (d === -1 ? '?' : String(d))).join(', ')}]`;

/** Why a shape cannot be edited in the form, or undefined when it can. */
export function shapeProblem(shape: readonly number[]): string | undefined {
  const count = elementCount(shape);
  if (count === undefined) return 'Every dimension must be a whole number of 0 or more.';
  if (count > MAX_FORM_ELEMENTS) {
    return (
      `${count.toLocaleString('en')} values is too many to edit here (at most ` +
      `${MAX_FORM_ELEMENTS.toLocaleString('en')}); send it from an API client as base64.`
    );
  }
  return undefined;
}

/** Inclusive integer range random values are drawn from; wide types stay small so ids and masks stay plausible. */
const RANDOM_INT_RANGE: Partial<Record<DataType, [number, number]>> = {
  UINT8: [0, 255],
  INT8: [-128, 127],
};
const DEFAULT_INT_RANGE: [number, number] = [0, 99];

const isFloat = (datatype: DataType): boolean => datatype === 'FP16' || datatype === 'FP32' || datatype === 'FP64';

const RANDOM_WORDS = ['cat', 'dog', 'bird', 'oak', 'pine', 'hello', 'world'];

function randomScalar(datatype: DataType, random: () => number): JsonScalar {
  if (datatype === 'BOOL') return random() < 0.5;
  if (datatype === 'BYTES') return RANDOM_WORDS[Math.floor(random() * RANDOM_WORDS.length)]!;
  // Four decimals keep pasted and displayed JSON readable.
  if (isFloat(datatype)) return Math.round((random() * 2 - 1) * 10_000) / 10_000;
  const [lo, hi] = RANDOM_INT_RANGE[datatype] ?? DEFAULT_INT_RANGE;
  return lo + Math.floor(random() * (hi - lo + 1));
}

const ZERO: Partial<Record<DataType, JsonScalar>> = { BOOL: false, BYTES: '' };

/** Row-major values for a tensor: all zeros (false for BOOL, empty strings for BYTES) or random ones. */
export function buildTensorValues(kind: FillKind, datatype: DataType, shape: readonly number[], random: () => number = Math.random): JsonScalar[] {
  const count = elementCount(shape) ?? 0;
  if (kind === 'zeros') return new Array<JsonScalar>(count).fill(ZERO[datatype] ?? 0);
  return Array.from({ length: count }, () => randomScalar(datatype, random));
}

/**
 * Parses pasted JSON (a flat or nested row-major array) and checks it against
 * the datatype and shape with the same codec the API uses.
 */
export function parseTensorJson(text: string, datatype: DataType, shape: readonly number[]): ParseResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    return { ok: false, message: `Not valid JSON: ${(err as Error).message}` };
  }
  if (!Array.isArray(parsed)) return { ok: false, message: 'Enter a JSON array of values, flat or nested, e.g. [0.5, 1, 2].' };
  const decoded = decodeTensorData(datatype, shape, parsed);
  return decoded.ok ? { ok: true, data: parsed } : { ok: false, message: decoded.detail };
}
