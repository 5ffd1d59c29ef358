import { sliceBinaryTensors, type FramingFailure, type SubmitInputTensor } from '@inferq/contracts';
import { AppError } from '@inferq/core';
import type { SubmitTensor } from './submit-inputs.ts';

// A /v1 submit body's inputs as the jobs service takes them, for the JSON and
// framed (binary extension) forms; multipart parts are `multipart-submit.ts`.

/** A framing failure from `@inferq/contracts` as the AppError routes throw (400 problem+json with the pointer). */
export const framingError = (failure: FramingFailure): AppError =>
  new AppError(failure.code, failure.detail, { errors: [{ pointer: failure.pointer, code: failure.code, detail: failure.detail }] });

const missing = (i: number, name: string, how: string): never => {
  const detail = `input "${name.slice(0, 100)}" has no data: ${how}`;
  throw new AppError('INPUT_DATA_INVALID', detail, { errors: [{ pointer: `/body/inputs/${i}/data`, code: 'INPUT_DATA_INVALID', detail }] });
};

/** An input's bytes are carried one way only: JSON `data`, `upload`, or outside the JSON (binary section, part). */
export function checkOneSource(input: SubmitInputTensor, i: number): void {
  const given = [
    input.data !== undefined && 'data',
    input.upload !== undefined && 'upload',
    input.parameters?.binary_data_size !== undefined && 'binary_data_size',
  ];
  const sources = given.filter(Boolean);
  if (sources.length > 1) {
    const detail = `input "${input.name.slice(0, 100)}" has ${sources.join(' and ')}: give one`;
    throw new AppError('BINARY_DATA_CONFLICT', detail, { errors: [{ pointer: `/body/inputs/${i}`, code: 'BINARY_DATA_CONFLICT', detail }] });
  }
}

/** The input as a `SubmitTensor` when its bytes are in the JSON (`data`) or an upload; undefined when they come from elsewhere. */
export function jsonSubmitTensor({ name, datatype, shape, data, upload }: SubmitInputTensor): SubmitTensor | undefined {
  if (data !== undefined) return { name, datatype, shape, data };
  if (upload !== undefined) return { name, datatype, shape, upload };
  return undefined;
}

/**
 * The inputs of a JSON or framed body: `binary` is the framed body's binary
 * section (undefined for a plain JSON body), cut by each input's
 * `parameters.binary_data_size` in order and carried as raw bytes.
 */
export function submitTensors(inputs: readonly SubmitInputTensor[], binary: Uint8Array | undefined): SubmitTensor[] {
  inputs.forEach(checkOneSource);
  const slices = sliceBinaryTensors(inputs, binary ?? new Uint8Array(0), 'inputs');
  if (!slices.ok) throw framingError(slices);
  return inputs.map((t, i) => {
    const bytes = slices.value[i];
    if (bytes) return { name: t.name, datatype: t.datatype, shape: t.shape, bytes };
    return jsonSubmitTensor(t) ?? missing(i, t.name, 'give `data`, `upload`, or `parameters.binary_data_size` with its bytes after the JSON');
  });
}
