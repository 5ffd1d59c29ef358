import { framingFailure, type FramingResult } from './framing-result.ts';

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Which outputs a response carries as binary data, as the request asks: an
 * output's own `parameters.binary_data`, else the request's
 * `parameters.binary_data_output`, else JSON (the extension's defaults).
 * Triton's raw binary request (no header: `null`) gets every output as binary.
 * A parameter that is not a boolean is refused, as Triton does.
 */
export function binaryOutputChoice(header: Record<string, unknown> | null): FramingResult<(name: string) => boolean> {
  if (header === null) return { ok: true, value: () => true };
  const all = isRecord(header.parameters) ? header.parameters.binary_data_output : undefined;
  if (all !== undefined && typeof all !== 'boolean')
    return framingFailure('VALIDATION_FAILED', '/body/parameters/binary_data_output', 'binary_data_output must be a boolean');
  const own = new Map<string, boolean>();
  const outputs: unknown[] = Array.isArray(header.outputs) ? header.outputs : [];
  for (let i = 0; i < outputs.length; i++) {
    const output = outputs[i];
    if (!isRecord(output) || typeof output.name !== 'string' || !isRecord(output.parameters)) continue;
    const binary = output.parameters.binary_data;
    if (binary === undefined) continue;
    if (typeof binary !== 'boolean') return framingFailure('VALIDATION_FAILED', `/body/outputs/${i}/parameters/binary_data`, 'binary_data must be a boolean');
    own.set(output.name, binary);
  }
  const fallback = all ?? false;
  return { ok: true, value: (name) => own.get(name) ?? fallback };
}
