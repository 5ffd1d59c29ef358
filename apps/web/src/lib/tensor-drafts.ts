import type { DataType, TensorSpec } from '@inferq/contracts';
import type { SubmitInput } from '@inferq/sdk';
import { readTensorFile, type TensorFile } from './tensor-file.ts';
import { buildTensorValues, initialShape, parseTensorJson, shapeProblem, type FillKind } from './tensor-form.ts';

/** One model input as the playground form holds it. */
export interface TensorDraft {
  name: string;
  datatype: DataType;
  /** The signature's shape; −1 marks the dims the form lets people set. */
  specShape: number[];
  shape: number[];
  /** Row-major values as JSON text. */
  text: string;
  /** How `text` was generated; undefined once edited by hand, so resizing leaves it alone. */
  fill: FillKind | undefined;
  error: string | undefined;
  /** Values from a dropped or picked file instead of `text`; sent as raw bytes (binary past the SDK's threshold). */
  file?: TensorFile;
  /** Why the last file dropped or picked cannot be used (the typed values stay). */
  fileError?: string;
}

export function fillDraft(draft: TensorDraft, kind: FillKind, random?: () => number): TensorDraft {
  const problem = shapeProblem(draft.shape);
  if (problem) return { ...draft, fill: kind, error: problem };
  return { ...draft, text: JSON.stringify(buildTensorValues(kind, draft.datatype, draft.shape, random)), fill: kind, error: undefined };
}

export const createDrafts = (specs: readonly TensorSpec[], kind: FillKind, random?: () => number): TensorDraft[] =>
  specs.map((spec) =>
    fillDraft(
      { name: spec.name, datatype: spec.datatype, specShape: spec.shape, shape: initialShape(spec.shape), text: '', fill: kind, error: undefined },
      kind,
      random,
    ),
  );

/** Sets a dynamic dim; generated values are regenerated to fit, hand-written ones are left to re-check. */
export function resizeDraft(draft: TensorDraft, dim: number, size: number): TensorDraft {
  const resized = { ...draft, shape: draft.shape.map((d, i) => (i === dim ? size : d)), error: undefined };
  return resized.fill ? fillDraft(resized, resized.fill) : resized;
}

export const editDraftText = (draft: TensorDraft, text: string): TensorDraft => ({ ...draft, text, fill: undefined, error: undefined });

/** Takes a file's values (checked against the signature: the error says why not), or with none goes back to the text. */
export function fileDraft(draft: TensorDraft, file: { name: string; content: Uint8Array } | null): TensorDraft {
  const { file: previous, fileError: _fileError, ...rest } = draft;
  if (!file) return { ...rest, error: undefined };
  const read = readTensorFile(file.name, file.content, draft);
  return read.ok ? { ...rest, file: read.file, error: undefined } : { ...rest, ...(previous && { file: previous }), fileError: read.message };
}

export type DraftsResult = { ok: true; inputs: SubmitInput[] } | { ok: false; drafts: TensorDraft[] };

/** The request inputs, or the drafts with an error on each one that cannot be sent. */
export function draftsToInputs(drafts: readonly TensorDraft[]): DraftsResult {
  const inputs: SubmitInput[] = [];
  const checked = drafts.map((draft) => {
    if (draft.file) {
      inputs.push({ name: draft.name, datatype: draft.file.datatype, shape: draft.file.shape, data: draft.file.bytes });
      return draft;
    }
    const problem = shapeProblem(draft.shape);
    const parsed = problem ? { ok: false as const, message: problem } : parseTensorJson(draft.text, draft.datatype, draft.shape);
    if (!parsed.ok) return { ...draft, error: parsed.message };
    inputs.push({ name: draft.name, datatype: draft.datatype, shape: draft.shape, data: parsed.data });
    return draft;
  });
  return checked.some((d) => d.error) ? { ok: false, drafts: checked } : { ok: true, inputs };
}

const INPUT_POINTER = /^(?:\/body)?\/inputs\/(\d+)(?:\/|$)/;

/** Puts the API's per-field errors (`/inputs/0/shape`, `/body/inputs/1/data`) on the drafts they name. */
export function applyServerErrors(drafts: readonly TensorDraft[], errors: ReadonlyArray<{ pointer: string; detail: string }>): TensorDraft[] {
  const byIndex = new Map<number, string>();
  for (const e of errors) {
    const match = INPUT_POINTER.exec(e.pointer);
    if (match && !byIndex.has(Number(match[1]))) byIndex.set(Number(match[1]), e.detail);
  }
  return drafts.map((draft, i) => (byIndex.has(i) ? { ...draft, error: byIndex.get(i) } : draft));
}
