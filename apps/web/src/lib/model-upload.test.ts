import { describe, expect, it } from 'vitest';
import { EMPTY_UPLOAD, isUploadField, modelNameFromFile, toModelUpload, validateUpload, type UploadFields } from './model-upload.ts';

const onnx = (name: string) => new File([new Uint8Array([8, 7])], name);
const tokenizerJson = () => new File(['{"model":{}}'], 'tokenizer.json', { type: 'application/json' });
const fieldsOf = (patch: Partial<UploadFields>): UploadFields => ({ ...EMPTY_UPLOAD, ...patch });

describe('modelNameFromFile', () => {
  it('turns a file name into a valid model name', () => {
    expect(modelNameFromFile('ResNet 50.onnx')).toBe('resnet-50');
    expect(modelNameFromFile('_ocr_det.v2.ONNX')).toBe('ocr_det.v2');
  });
});

describe('validateUpload', () => {
  it('accepts a named .onnx file with empty or in-range batching', () => {
    expect(validateUpload(fieldsOf({ name: 'mlp', file: onnx('mlp.onnx'), maxBatchDelayMs: '5' }))).toEqual({});
  });

  it('names every bad field', () => {
    const errors = validateUpload(fieldsOf({ name: 'Bad Name', file: onnx('model.pt'), maxBatchSize: '0', maxBatchDelayMs: '1.5' }));
    expect(Object.keys(errors).sort()).toEqual(['file', 'maxBatchDelayMs', 'maxBatchSize', 'name']);
    expect(validateUpload(EMPTY_UPLOAD)).toMatchObject({ name: 'Enter a model name.', file: 'Choose an .onnx file.' });
  });

  it('checks the latency target only with auto batching', () => {
    const mlp = { name: 'mlp', file: onnx('mlp.onnx') };
    expect(validateUpload(fieldsOf({ ...mlp, batching: 'auto', latencyTargetMs: '250' }))).toEqual({});
    expect(Object.keys(validateUpload(fieldsOf({ ...mlp, batching: 'auto', latencyTargetMs: '0' })))).toEqual(['latencyTargetMs']);
    expect(Object.keys(validateUpload(fieldsOf({ ...mlp, batching: 'auto', latencyTargetMs: '600001' })))).toEqual(['latencyTargetMs']);
    expect(validateUpload(fieldsOf({ ...mlp, batching: 'fixed', latencyTargetMs: 'x' }))).toEqual({});
  });

  it('checks max tokens is a whole number from 1 only when a tokenizer goes with the model', () => {
    const encoder = { name: 'encoder', file: onnx('encoder.onnx'), tokenizer: tokenizerJson() };
    expect(validateUpload(fieldsOf({ ...encoder, maxTokens: '128' }))).toEqual({});
    expect(Object.keys(validateUpload(fieldsOf({ ...encoder, maxTokens: '0' })))).toEqual(['maxTokens']);
    expect(Object.keys(validateUpload(fieldsOf({ ...encoder, maxTokens: '12.5' })))).toEqual(['maxTokens']);
    // Hidden without a tokenizer, and never sent: nothing to complain about.
    expect(validateUpload(fieldsOf({ ...encoder, tokenizer: null, maxTokens: 'x' }))).toEqual({});
  });
});

describe('toModelUpload', () => {
  it('sends the batching numbers and the response cache, and no embedding without a tokenizer', () => {
    const file = onnx('mlp.onnx');
    expect(toModelUpload({ ...fieldsOf({ name: 'mlp', maxBatchSize: '16', responseCache: true, pooling: 'cls', maxTokens: '9' }), file })).toEqual({
      name: 'mlp',
      file,
      maxBatchSize: 16,
      maxBatchDelayMs: undefined,
      responseCache: true,
      embedding: undefined,
    });
  });

  it('sends auto batching with its latency target, and nothing of either for fixed', () => {
    const file = onnx('mlp.onnx');
    expect(toModelUpload({ ...fieldsOf({ name: 'mlp', batching: 'auto', latencyTargetMs: '250' }), file })).toMatchObject({
      batching: 'auto',
      latencyTargetMs: 250,
    });
    expect(toModelUpload({ ...fieldsOf({ name: 'mlp', batching: 'auto' }), file })).toMatchObject({ batching: 'auto', latencyTargetMs: undefined });
    const fixed = toModelUpload({ ...fieldsOf({ name: 'mlp', batching: 'fixed', latencyTargetMs: '250' }), file });
    expect('batching' in fixed || 'latencyTargetMs' in fixed).toBe(false);
  });

  it('sends the tokenizer with the settings that were set, leaving the rest to the server', () => {
    const file = onnx('encoder.onnx');
    const tokenizer = tokenizerJson();
    expect(toModelUpload({ ...fieldsOf({ name: 'encoder', tokenizer }), file }).embedding).toEqual({
      tokenizer,
      pooling: undefined,
      normalize: true,
      output: undefined,
      maxTokens: undefined,
    });
    const set = fieldsOf({ name: 'encoder', tokenizer, pooling: 'mean', normalize: false, embeddingOutput: ' pooled ', maxTokens: '64' });
    expect(toModelUpload({ ...set, file }).embedding).toEqual({ tokenizer, pooling: 'mean', normalize: false, output: 'pooled', maxTokens: 64 });
  });
});

describe('isUploadField', () => {
  it('knows the fields the API names in its pointers', () => {
    expect(['file', 'tokenizer', 'pooling', 'embeddingOutput', 'maxTokens', 'maxBatchSize', 'batching', 'latencyTargetMs'].every(isUploadField)).toBe(true);
    expect(isUploadField('')).toBe(false);
    expect(isUploadField('toString')).toBe(false);
  });
});
