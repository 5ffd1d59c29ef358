import { isDataType, minByteLengthOf, type ModelSignature, type RawTensor } from '@inferq/contracts';
import type { ModelSession } from '@inferq/inference';

/**
 * Zero-filled inputs for one run from the model's signature, dynamic dims
 * set to 1 (BYTES: zero lengths, every element empty); or why none can be
 * built (a datatype inferq does not know, or no inputs at all).
 */
export function buildWarmupInputs(signature: Pick<ModelSignature, 'inputs'>): { ok: true; inputs: RawTensor[] } | { ok: false; reason: string } {
  if (signature.inputs.length === 0) return { ok: false, reason: 'the model has no inputs' };
  const inputs: RawTensor[] = [];
  for (const spec of signature.inputs) {
    // The signature schema admits inferq's datatypes only; an older or foreign row may not.
    if (!isDataType(spec.datatype)) return { ok: false, reason: `input "${spec.name}" is ${String(spec.datatype)}, which cannot be zero-filled` };
    const shape = spec.shape.map((d) => (d < 0 ? 1 : d));
    const bytes = minByteLengthOf(spec.datatype, shape);
    if (bytes === undefined) return { ok: false, reason: `input "${spec.name}" has no concrete shape` };
    inputs.push({ name: spec.name, datatype: spec.datatype, shape, data: new Uint8Array(bytes) });
  }
  return { ok: true, inputs };
}

export type WarmupOutcome =
  | { status: 'warmed'; ms: number }
  | { status: 'skipped'; reason: string }
  /** The run returned a failed result: the session is still usable. */
  | { status: 'run-failed'; ms: number; reason: string }
  /** The run rejected: the session's thread is gone. */
  | { status: 'session-failed'; reason: string };

/**
 * One session run on zero-filled inputs, so onnxruntime's first-run costs
 * (allocating the arena, picking kernels) fall here and not on the first
 * real batch.
 */
export async function warmUpSession(session: Pick<ModelSession, 'infer'>, signature: Pick<ModelSignature, 'inputs'>): Promise<WarmupOutcome> {
  const built = buildWarmupInputs(signature);
  if (!built.ok) return { status: 'skipped', reason: built.reason };
  const started = performance.now();
  let run;
  try {
    run = await session.infer([{ inputs: built.inputs }]);
  } catch (err) {
    return { status: 'session-failed', reason: err instanceof Error ? err.message : String(err) };
  }
  const ms = performance.now() - started;
  const [result] = run.results;
  if (result && !result.ok) return { status: 'run-failed', ms, reason: `${result.code}: ${result.message}` };
  return { status: 'warmed', ms };
}
