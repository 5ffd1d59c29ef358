import { useState } from 'react';
import type { Model } from '@inferq/contracts';
import { createDrafts, editDraftText, fileDraft, fillDraft, resizeDraft, type TensorDraft } from '../lib/tensor-drafts.ts';
import type { FillKind } from '../lib/tensor-form.ts';

const draftsFor = (model: Model | undefined): TensorDraft[] => (model ? createDrafts(model.signature.inputs, 'random') : []);

/** The playground's input drafts for a model; they start over (random values) when the model changes. */
export function useTensorDrafts(model: Model | undefined) {
  const modelKey = model ? `${model.name}:${model.version}` : '';
  const [state, setState] = useState(() => ({ modelKey, drafts: draftsFor(model) }));
  let { drafts } = state;
  if (state.modelKey !== modelKey) {
    drafts = draftsFor(model);
    setState({ modelKey, drafts });
  }
  const update = (change: (drafts: TensorDraft[]) => TensorDraft[]) => setState((s) => ({ ...s, drafts: change(s.drafts) }));
  const updateOne = (index: number, change: (draft: TensorDraft) => TensorDraft) =>
    update((all) => all.map((draft, i) => (i === index ? change(draft) : draft)));

  return {
    drafts,
    fillAll: (kind: FillKind) => update((all) => all.map((draft) => fillDraft(draft, kind))),
    resize: (index: number, dim: number, size: number) => updateOne(index, (draft) => resizeDraft(draft, dim, size)),
    editText: (index: number, text: string) => updateOne(index, (draft) => editDraftText(draft, text)),
    replaceAll: (next: TensorDraft[]) => update(() => next),
    /** Reads a dropped or picked file into the input (null: back to the typed values). */
    setFile: async (index: number, file: File | null) => {
      const content = file ? new Uint8Array(await file.arrayBuffer()) : null;
      updateOne(index, (draft) => fileDraft(draft, file && content && { name: file.name, content }));
    },
  };
}
