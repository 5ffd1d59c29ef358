import { describe, expect, it } from 'vitest';
import { modelNameFromFile, validateUpload } from './model-upload.ts';

const onnx = (name: string) => new File([new Uint8Array([8, 7])], name);

describe('modelNameFromFile', () => {
  it('turns a file name into a valid model name', () => {
    expect(modelNameFromFile('ResNet 50.onnx')).toBe('resnet-50');
    expect(modelNameFromFile('_ocr_det.v2.ONNX')).toBe('ocr_det.v2');
  });
});

describe('validateUpload', () => {
  it('accepts a named .onnx file with empty or in-range batching', () => {
    expect(validateUpload({ name: 'mlp', file: onnx('mlp.onnx'), maxBatchSize: '', maxBatchDelayMs: '5' })).toEqual({});
  });

  it('names every bad field', () => {
    const errors = validateUpload({ name: 'Bad Name', file: onnx('model.pt'), maxBatchSize: '0', maxBatchDelayMs: '1.5' });
    expect(Object.keys(errors).sort()).toEqual(['file', 'maxBatchDelayMs', 'maxBatchSize', 'name']);
    expect(validateUpload({ name: '', file: null, maxBatchSize: '', maxBatchDelayMs: '' })).toMatchObject({ name: 'Enter a model name.', file: 'Choose an .onnx file.' });
  });
});
