import type { ErrorCode } from '../errors.ts';

/**
 * A framing failure: the catalogue code, a detail for people, and a JSON
 * pointer to what is wrong, in the API's problem `errors[].pointer` form
 * (`/headers/inference-header-content-length`, `/body/inputs/1/parameters/binary_data_size`).
 */
export interface FramingFailure {
  ok: false;
  code: ErrorCode;
  detail: string;
  pointer: string;
}
export type FramingResult<T> = { ok: true; value: T } | FramingFailure;

export const framingFailure = (code: ErrorCode, pointer: string, detail: string): FramingFailure => ({ ok: false, code, detail, pointer });
