import { describe, expect, it } from 'vitest';
import { applyServerErrors, createDrafts, draftsToInputs, editDraftText, resizeDraft } from './tensor-drafts.ts';

const specs = [
  { name: 'input_ids', datatype: 'INT64' as const, shape: [-1, -1] },
  { name: 'scale', datatype: 'FP32' as const, shape: [2] },
];

describe('tensor drafts', () => {
  it('starts each input at its signature shape with dynamic dims of 1, filled', () => {
    const drafts = createDrafts(specs, 'zeros');
    expect(drafts.map((d) => [d.shape, d.text])).toEqual([
      [[1, 1], '[0]'],
      [[2], '[0,0]'],
    ]);
  });

  it('regenerates generated values when a dim changes but keeps hand-written text', () => {
    const [ids] = createDrafts(specs, 'zeros');
    expect(resizeDraft(ids!, 1, 3).text).toBe('[0,0,0]');
    const edited = editDraftText(ids!, '[5]');
    expect(resizeDraft(edited, 1, 3)).toMatchObject({ shape: [1, 3], text: '[5]', fill: undefined });
  });

  it('builds request inputs, or marks each draft that cannot be sent', () => {
    const drafts = createDrafts(specs, 'zeros');
    expect(draftsToInputs(drafts)).toEqual({
      ok: true,
      inputs: [
        { name: 'input_ids', datatype: 'INT64', shape: [1, 1], data: [0] },
        { name: 'scale', datatype: 'FP32', shape: [2], data: [0, 0] },
      ],
    });
    const bad = draftsToInputs([drafts[0]!, editDraftText(drafts[1]!, '[1]')]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.drafts.map((d) => d.error === undefined)).toEqual([true, false]);
  });

  it('puts server errors on the input their pointer names', () => {
    const drafts = createDrafts(specs, 'zeros');
    const marked = applyServerErrors(drafts, [
      { pointer: '/inputs/1/shape', detail: 'wrong shape' },
      { pointer: '/body/inputs/0/data', detail: 'bad data' },
      { pointer: '/inputs', detail: 'missing' },
    ]);
    expect(marked.map((d) => d.error)).toEqual(['bad data', 'wrong shape']);
  });
});
