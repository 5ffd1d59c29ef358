import { describe, expect, it } from 'vitest';
import { ErrorCatalogue } from '../errors.ts';
import { decodeBytesElements, encodeBytesElements } from './bytes-elements.ts';
import { binaryOutputChoice } from './output-choice.ts';
import { parseInferRequestBody, parseInferResponseBody } from './parse-body.ts';
import { parseHeaderLength } from './split-body.ts';
import { planBinaryTensors } from './tensor-slices.ts';

const utf8 = new TextEncoder();
const concat = (...parts: Uint8Array[]) => {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  parts.reduce((at, p) => (out.set(p, at), at + p.byteLength), 0);
  return out;
};
const uint32le = (...values: number[]) => new Uint8Array(new Uint32Array(values).buffer);
/** A body as the extension lays it out: JSON header text, then the binary section; returns it and its header length. */
const frame = (headerText: string, ...binary: Uint8Array[]) => {
  const header = utf8.encode(headerText);
  return { body: concat(header, ...binary), headerLength: header.byteLength };
};
const request = (header: object, ...binary: Uint8Array[]) => frame(JSON.stringify(header), ...binary);

// The request of the extension's document (docs/protocol/extension_binary_data.md), as written there.
const DOC_REQUEST = `{
  "model_name" : "mymodel",
  "inputs" : [
    {
      "name" : "input0",
      "shape" : [ 2, 2 ],
      "datatype" : "UINT32",
      "parameters" : {
        "binary_data_size" : 16
      }
    },
    {
      "name" : "input1",
      "shape" : [ 3 ],
      "datatype" : "BOOL",
      "parameters" : {
        "binary_data_size" : 3
      }
    }
  ],
  "outputs" : [
    {
      "name" : "output0",
      "parameters" : {
        "binary_data" : true
      }
    }
  ]
}`;
const DOC_RESPONSE = `{
  "outputs" : [
    {
      "name" : "output0",
      "shape" : [ 3, 2 ],
      "datatype"  : "FP32",
      "parameters" : {
        "binary_data_size" : 24
      }
    }
  ]
}`;

const expectFailure = (result: { ok: boolean }, code: keyof typeof ErrorCatalogue, pointer: string) => {
  expect(result).toMatchObject({ ok: false, code, pointer });
  expect(ErrorCatalogue[code].status).toBe(400);
};

describe('parsing the documented examples', () => {
  it('splits the request example: 16 bytes for input0, then 3 for input1 (19 in all)', () => {
    const input0 = uint32le(1, 2, 3, 4);
    const input1 = new Uint8Array([1, 0, 1]);
    const { body, headerLength } = frame(DOC_REQUEST, input0, input1);
    expect(body.byteLength).toBe(headerLength + 19);
    const parsed = parseInferRequestBody(body, headerLength);
    if (!parsed.ok || parsed.value.header === null) throw new Error(JSON.stringify(parsed));
    expect(parsed.value.header.model_name).toBe('mymodel');
    expect(parsed.value.tensors).toEqual([input0, input1]);
    const choice = binaryOutputChoice(parsed.value.header);
    expect(choice.ok && choice.value('output0')).toBe(true);
  });

  it('splits the response example: 24 bytes of FP32 [3,2] for output0', () => {
    const output0 = new Uint8Array(new Float32Array([1, 2, 3, 4, 5, 6]).buffer);
    const { body, headerLength } = frame(DOC_RESPONSE, output0);
    const parsed = parseInferResponseBody(body, headerLength);
    expect(parsed).toEqual({ ok: true, value: { header: JSON.parse(DOC_RESPONSE), tensors: [output0] } });
  });

  it('plans the binary section from the header alone: 19 bytes, input0 at 0, input1 at 16', () => {
    const plan = planBinaryTensors(JSON.parse(DOC_REQUEST).inputs, 'inputs');
    expect(plan).toEqual({
      ok: true,
      value: {
        totalBytes: 19,
        slices: [
          { index: 0, offset: 0, byteLength: 16, datatype: 'UINT32', count: 4 },
          { index: 1, offset: 16, byteLength: 3, datatype: 'BOOL', count: 3 },
        ],
      },
    });
  });

  it("takes the raw binary request (Inference-Header-Content-Length: 0) as one input's bytes", () => {
    const raw = new Uint8Array(16).fill(7);
    expect(parseInferRequestBody(raw, 0)).toEqual({ ok: true, value: { header: null, raw } });
    const choice = binaryOutputChoice(null);
    expect(choice.ok && choice.value('anything')).toBe(true);
  });
});

describe('parsing bodies clients send', () => {
  it('reads a body without the header as all JSON', () => {
    const { body } = request({ inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }] });
    expect(parseInferRequestBody(body, undefined)).toMatchObject({ ok: true, value: { tensors: [undefined] } });
  });

  it('reads a header length equal to the body (the C++ client with JSON inputs)', () => {
    const { body, headerLength } = request({ inputs: [{ name: 'x', datatype: 'FP32', shape: [1], data: [1] }] });
    expect(parseInferRequestBody(body, headerLength)).toMatchObject({ ok: true, value: { tensors: [undefined] } });
  });

  it('mixes JSON inputs and binary inputs in one request, slicing only the binary ones in order', () => {
    const a = uint32le(9);
    const c = uint32le(7, 8);
    const { body, headerLength } = request(
      {
        inputs: [
          { name: 'a', datatype: 'UINT32', shape: [1], parameters: { binary_data_size: 4 } },
          { name: 'b', datatype: 'INT32', shape: [2], data: [1, 2] },
          { name: 'c', datatype: 'UINT32', shape: [2], parameters: { binary_data_size: 8 } },
        ],
      },
      a,
      c,
    );
    const parsed = parseInferRequestBody(body, headerLength);
    expect(parsed).toMatchObject({ ok: true, value: { tensors: [a, undefined, c] } });
  });

  it('reads BYTES tensors element by element, and empty tensors as empty slices', () => {
    const strings = encodeBytesElements(['hello', '', 'wörld']);
    const { body, headerLength } = request(
      {
        inputs: [
          { name: 's', datatype: 'BYTES', shape: [3], parameters: { binary_data_size: strings.byteLength } },
          { name: 'e', datatype: 'FP32', shape: [0, 4], parameters: { binary_data_size: 0 } },
        ],
      },
      strings,
    );
    const parsed = parseInferRequestBody(body, headerLength);
    if (!parsed.ok || parsed.value.header === null) throw new Error(JSON.stringify(parsed));
    const [s, e] = parsed.value.tensors;
    const elements = decodeBytesElements(s!, 3);
    expect(elements.ok && elements.value.map((v) => new TextDecoder().decode(v))).toEqual(['hello', '', 'wörld']);
    expect(e).toEqual(new Uint8Array(0));
  });

  it('applies binary_data over binary_data_output, and JSON when neither is given', () => {
    const choice = binaryOutputChoice({
      parameters: { binary_data_output: true },
      outputs: [{ name: 'a', parameters: { binary_data: false } }, { name: 'b' }],
    });
    expect(choice.ok && [choice.value('a'), choice.value('b'), choice.value('c')]).toEqual([false, true, true]);
    const none = binaryOutputChoice({ outputs: [{ name: 'a', parameters: { binary_data: true } }] });
    expect(none.ok && [none.value('a'), none.value('b')]).toEqual([true, false]);
  });
});

describe('malformed framing', () => {
  const UINT32_4 = { name: 'input0', datatype: 'UINT32', shape: [2, 2], parameters: { binary_data_size: 16 } };
  const BOOL_3 = { name: 'input1', datatype: 'BOOL', shape: [3], parameters: { binary_data_size: 3 } };

  it.each(['-1', '1.5', 'abc', '', '0x10', '1e3', '99999999999999999999'])('refuses Inference-Header-Content-Length %j', (value) => {
    expectFailure(parseHeaderLength(value, 100), 'BINARY_HEADER_LENGTH_INVALID', '/headers/inference-header-content-length');
  });

  it('refuses a header length past the body', () => {
    const { body, headerLength } = request({ inputs: [] });
    expectFailure(parseInferRequestBody(body, headerLength + 1), 'BINARY_HEADER_LENGTH_INVALID', '/headers/inference-header-content-length');
  });

  it('refuses a header that is not JSON, not UTF-8 or not an object', () => {
    const cut = request({ inputs: [UINT32_4] }, uint32le(1, 2, 3, 4));
    expectFailure(parseInferRequestBody(cut.body, cut.headerLength - 1), 'MALFORMED_BODY', '/body');
    expectFailure(parseInferRequestBody(new Uint8Array([0x7b, 0xff, 0x7d]), 3), 'MALFORMED_BODY', '/body');
    expectFailure(parseInferRequestBody(utf8.encode('[1]'), 3), 'MALFORMED_BODY', '/body');
  });

  it.each([-1, 1.5, '16', null, 2 ** 60, true])('refuses binary_data_size %j', (size) => {
    const { body, headerLength } = request({ inputs: [{ ...UINT32_4, parameters: { binary_data_size: size } }] }, uint32le(1, 2, 3, 4));
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_SIZE_INVALID', '/body/inputs/0/parameters/binary_data_size');
  });

  it('refuses a size that disagrees with shape × datatype', () => {
    const { body, headerLength } = request({ inputs: [{ ...UINT32_4, parameters: { binary_data_size: 12 } }] }, uint32le(1, 2, 3));
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs/0/parameters/binary_data_size');
  });

  it('refuses missing bytes: a size that runs past the binary section', () => {
    const { body, headerLength } = request({ inputs: [UINT32_4, BOOL_3] }, uint32le(1, 2, 3, 4), new Uint8Array([1, 0]));
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs/1/parameters/binary_data_size');
  });

  it('refuses trailing bytes after the last tensor, and a binary section no tensor claims', () => {
    const trailing = request({ inputs: [UINT32_4, BOOL_3] }, uint32le(1, 2, 3, 4), new Uint8Array([1, 0, 1, 9]));
    expectFailure(parseInferRequestBody(trailing.body, trailing.headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs');
    const unclaimed = request({ inputs: [{ name: 'x', datatype: 'INT32', shape: [1], data: [1] }] }, uint32le(1));
    expectFailure(parseInferRequestBody(unclaimed.body, unclaimed.headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs');
  });

  it('refuses overlapping sizes: two tensors claiming the same bytes do not add up', () => {
    // Both claim the same 16 bytes; consecutive slicing needs 32.
    const { body, headerLength } = request({ inputs: [UINT32_4, { ...UINT32_4, name: 'again' }] }, uint32le(1, 2, 3, 4));
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs/1/parameters/binary_data_size');
  });

  it('refuses binary_data_size when the body has no binary section (no Inference-Header-Content-Length)', () => {
    const { body } = request({ inputs: [UINT32_4] });
    const result = parseInferRequestBody(body, undefined);
    expectFailure(result, 'BINARY_SIZE_MISMATCH', '/body/inputs/0/parameters/binary_data_size');
    expect(!result.ok && result.detail).toMatch(/Inference-Header-Content-Length/);
  });

  it('refuses an input with both data and binary_data_size', () => {
    const { body, headerLength } = request({ inputs: [{ ...UINT32_4, data: [1, 2, 3, 4] }] }, uint32le(1, 2, 3, 4));
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_DATA_CONFLICT', '/body/inputs/0');
  });

  it('refuses binary data of a datatype it cannot size, and a shape without a product', () => {
    const bf16 = request({ inputs: [{ name: 'x', datatype: 'BF16', shape: [2], parameters: { binary_data_size: 4 } }] }, uint32le(1));
    expectFailure(parseInferRequestBody(bf16.body, bf16.headerLength), 'DATATYPE_UNSUPPORTED', '/body/inputs/0/datatype');
    const shape = request({ inputs: [{ ...UINT32_4, shape: [2, -2] }] }, uint32le(1, 2, 3, 4));
    expectFailure(parseInferRequestBody(shape.body, shape.headerLength), 'INPUT_SHAPE_MISMATCH', '/body/inputs/0/shape');
  });

  const bytesInput = (section: Uint8Array, count: number) =>
    request({ inputs: [{ name: 's', datatype: 'BYTES', shape: [count], parameters: { binary_data_size: section.byteLength } }] }, section);
  it.each([
    ['an element length past the slice', concat(uint32le(5), utf8.encode('abc')), 1],
    ['fewer elements than the shape holds', encodeBytesElements(['a', 'b']), 3],
    ['bytes left after the last element', concat(encodeBytesElements(['a']), new Uint8Array([0])), 1],
    ['a length prefix cut short', concat(encodeBytesElements(['a']), new Uint8Array([1, 0])), 2],
  ])('refuses BYTES with %s', (_label, section, count) => {
    const { body, headerLength } = bytesInput(section, count);
    expectFailure(parseInferRequestBody(body, headerLength), 'BINARY_SIZE_MISMATCH', '/body/inputs/0/parameters/binary_data_size');
  });

  it('refuses binary_data and binary_data_output that are not booleans', () => {
    expectFailure(binaryOutputChoice({ parameters: { binary_data_output: 'yes' } }), 'VALIDATION_FAILED', '/body/parameters/binary_data_output');
    expectFailure(
      binaryOutputChoice({ outputs: [{ name: 'a', parameters: { binary_data: 1 } }] }),
      'VALIDATION_FAILED',
      '/body/outputs/0/parameters/binary_data',
    );
  });

  it('refuses a response with a zero-length header', () => {
    expectFailure(parseInferResponseBody(new Uint8Array(4), 0), 'BINARY_HEADER_LENGTH_INVALID', '/headers/inference-header-content-length');
  });
});
