import { describe, expect, it } from 'vitest';
import { DATATYPES, DataTypes } from '../datatypes.ts';
import { encodeInferRequest, encodeInferResponse } from './build-body.ts';
import { encodeBytesElements } from './bytes-elements.ts';
import { binaryOutputChoice } from './output-choice.ts';
import { parseInferRequestBody, parseInferResponseBody } from './parse-body.ts';

const utf8 = new TextEncoder();
const int32le = (...values: number[]) => new Uint8Array(new Int32Array(values).buffer);
const range = (n: number) => Array.from({ length: n }, (_, i) => i);
const ok = <T>(result: { ok: true; value: T } | { ok: false }): T => {
  if (!result.ok) throw new Error(JSON.stringify(result));
  return result.value;
};
const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

// What tritonclient.http sends (_utils.py _get_inference_request: rapidjson.dumps, compact, keys
// id, inputs, outputs, parameters; inputs name, shape, datatype, parameters, data), written out by hand.
describe('requests byte for byte as tritonclient builds them', () => {
  it('binary inputs and listed outputs (InferRequestedOutput binary_data=True and False)', () => {
    const in0 = int32le(...range(16));
    const in1 = int32le(...range(16).map((i) => i * 2));
    const framed = ok(
      encodeInferRequest({
        id: '1',
        inputs: [
          { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: in0 },
          { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: in1 },
        ],
        outputs: [{ name: 'OUTPUT0' }, { name: 'OUTPUT1', binary: false }],
      }),
    );
    const json =
      '{"id":"1","inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}},' +
      '{"name":"INPUT1","shape":[1,16],"datatype":"INT32","parameters":{"binary_data_size":64}}],' +
      '"outputs":[{"name":"OUTPUT0","parameters":{"binary_data":true}},{"name":"OUTPUT1","parameters":{"binary_data":false}}]}';
    expect(framed.headerLength).toBe(json.length);
    expect(framed.contentType).toBe('application/octet-stream');
    expect(framed.body).toEqual(new Uint8Array([...utf8.encode(json), ...in0, ...in1]));
  });

  it('no outputs listed: binary_data_output asks for all of them', () => {
    const in0 = int32le(1, 2);
    const framed = ok(encodeInferRequest({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [2], data: in0 }] }));
    const json = '{"inputs":[{"name":"INPUT0","shape":[2],"datatype":"INT32","parameters":{"binary_data_size":8}}],"parameters":{"binary_data_output":true}}';
    expect(framed.body).toEqual(new Uint8Array([...utf8.encode(json), ...in0]));
    expect(framed.headerLength).toBe(json.length);
  });

  it('a BYTES input (serialize_byte_tensor: 4-byte little-endian length, then the bytes)', () => {
    const framed = ok(
      encodeInferRequest({ inputs: [{ name: 'TEXT', datatype: 'BYTES', shape: [2], data: ['hello', 'w'], binary: true }], outputs: [{ name: 'OUT' }] }),
    );
    const json =
      '{"inputs":[{"name":"TEXT","shape":[2],"datatype":"BYTES","parameters":{"binary_data_size":14}}],' +
      '"outputs":[{"name":"OUT","parameters":{"binary_data":true}}]}';
    expect(framed.body).toEqual(new Uint8Array([...utf8.encode(json), 5, 0, 0, 0, ...utf8.encode('hello'), 1, 0, 0, 0, ...utf8.encode('w')]));
  });

  it('all inputs as JSON (set_data_from_numpy(binary_data=False)): a plain JSON body, no header length', () => {
    const framed = ok(
      encodeInferRequest({ inputs: [{ name: 'INPUT0', datatype: 'INT32', shape: [3], data: [1, 2, 3] }], outputs: [{ name: 'OUT', binary: false }] }),
    );
    expect(framed.headerLength).toBeUndefined();
    expect(framed.contentType).toBe('application/json');
    expect(text(framed.body)).toBe(
      '{"inputs":[{"name":"INPUT0","shape":[3],"datatype":"INT32","data":[1,2,3]}],"outputs":[{"name":"OUT","parameters":{"binary_data":false}}]}',
    );
  });
});

describe('building requests', () => {
  it('sends JSON values as binary from the threshold up, and smaller ones as JSON', () => {
    const framed = ok(
      encodeInferRequest(
        {
          inputs: [
            { name: 'big', datatype: 'FP32', shape: [4], data: [1, 2, 3, 4] },
            { name: 'small', datatype: 'INT8', shape: [2], data: [1, -1] },
          ],
        },
        { binaryThresholdBytes: 16, binaryOutputs: false },
      ),
    );
    const parsed = ok(parseInferRequestBody(framed.body, framed.headerLength));
    if (parsed.header === null) throw new Error('raw');
    expect(parsed.tensors[0]).toEqual(new Uint8Array(new Float32Array([1, 2, 3, 4]).buffer));
    expect(parsed.tensors[1]).toBeUndefined();
    expect(parsed.header.parameters).toEqual({ binary_data_output: false });
  });

  it('sends bytes as JSON when asked, and refuses bytes that disagree with the shape', () => {
    const framed = ok(encodeInferRequest({ inputs: [{ name: 'x', datatype: 'INT32', shape: [2], data: int32le(5, 6), binary: false }] }));
    expect(JSON.parse(text(framed.body)).inputs[0].data).toEqual([5, 6]);
    const bad = encodeInferRequest({ inputs: [{ name: 'x', datatype: 'INT32', shape: [3], data: int32le(5, 6) }] });
    expect(bad).toMatchObject({ ok: false, code: 'BINARY_SIZE_MISMATCH', pointer: '/body/inputs/0/parameters/binary_data_size' });
    const values = encodeInferRequest({ inputs: [{ name: 'x', datatype: 'INT8', shape: [1], data: [300], binary: true }] });
    expect(values).toMatchObject({ ok: false, code: 'INPUT_DATA_INVALID', pointer: '/body/inputs/0/data' });
  });
});

describe('building responses', () => {
  const fp32 = new Uint8Array(new Float32Array([0.5, 1, 1.5, 2, 2.5, 3]).buffer);
  const head = { model_name: 'mymodel', model_version: '1', id: 'req-1' };

  it('answers the documented example: output0 as 24 bytes of FP32 after the header', () => {
    const framed = encodeInferResponse({ ...head, outputs: [{ name: 'output0', datatype: 'FP32', shape: [3, 2], bytes: fp32 }] }, () => true);
    const json =
      '{"model_name":"mymodel","model_version":"1","id":"req-1",' +
      '"outputs":[{"name":"output0","datatype":"FP32","shape":[3,2],"parameters":{"binary_data_size":24}}]}';
    expect(framed).toEqual({ body: new Uint8Array([...utf8.encode(json), ...fp32]), headerLength: json.length, contentType: 'application/octet-stream' });
  });

  it('answers all JSON when no output is binary, as Triton does (no header length)', () => {
    const framed = encodeInferResponse({ ...head, outputs: [{ name: 'o', datatype: 'FP32', shape: [3, 2], bytes: fp32 }] }, () => false);
    expect(framed.headerLength).toBeUndefined();
    expect(framed.contentType).toBe('application/json');
    expect(JSON.parse(text(framed.body)).outputs[0].data).toEqual([0.5, 1, 1.5, 2, 2.5, 3]);
  });

  it('writes BYTES outputs as strings in JSON, and as length-prefixed elements in binary', () => {
    const bytes = encodeBytesElements(['a', 'bc']);
    const asJson = encodeInferResponse({ ...head, outputs: [{ name: 's', datatype: 'BYTES', shape: [2], bytes }] }, () => false);
    expect(JSON.parse(text(asJson.body)).outputs[0].data).toEqual(['a', 'bc']);
    const asBinary = encodeInferResponse({ ...head, outputs: [{ name: 's', datatype: 'BYTES', shape: [2], bytes }] }, () => true);
    expect(ok(parseInferResponseBody(asBinary.body, asBinary.headerLength)).tensors).toEqual([bytes]);
  });
});

describe('round trip', () => {
  it('encodes a mixed request and parses back the same tensors; the response follows its output choice', () => {
    const strings = ['ü', '', 'three'];
    const ints = int32le(-1, 0, 1, 2);
    const framed = ok(
      encodeInferRequest(
        {
          id: 'r',
          parameters: { priority: 'high' },
          inputs: [
            { name: 'ints', datatype: 'INT32', shape: [2, 2], data: ints },
            { name: 'json', datatype: 'FP64', shape: [1], data: [[0.25]] },
            { name: 'text', datatype: 'BYTES', shape: [3], data: strings, binary: true },
            { name: 'none', datatype: 'UINT8', shape: [0], data: new Uint8Array(0) },
          ],
          outputs: [
            { name: 'a', binary: true },
            { name: 'b', binary: false },
          ],
        },
        { binaryOutputs: false },
      ),
    );
    const parsed = ok(parseInferRequestBody(framed.body, framed.headerLength));
    if (parsed.header === null) throw new Error('raw');
    expect(parsed.tensors).toEqual([ints, undefined, encodeBytesElements(strings), new Uint8Array(0)]);
    expect(parsed.header).toMatchObject({ id: 'r', parameters: { priority: 'high' } });
    const choice = ok(binaryOutputChoice(parsed.header));
    const outputs = [
      { name: 'a', datatype: 'INT32', shape: [4], bytes: ints },
      { name: 'b', datatype: 'INT32', shape: [4], bytes: ints },
    ];
    const response = encodeInferResponse({ model_name: 'm', outputs }, choice);
    const back = ok(parseInferResponseBody(response.body, response.headerLength));
    expect(back.tensors).toEqual([ints, undefined]);
    expect(back.header).toMatchObject({ outputs: [{ name: 'a' }, { name: 'b', data: [-1, 0, 1, 2] }] });
  });
});

describe('round trip of every datatype', () => {
  // Bytes every datatype reads back unchanged through JSON too (small integers; BOOL 0 and 1).
  const bytesOf = (datatype: (typeof DATATYPES)[number], count: number) => {
    if (datatype === 'BYTES') return encodeBytesElements(range(count).map(String));
    const size = DataTypes[datatype].bytes;
    const out = new Uint8Array(count * size);
    for (let i = 0; i < count; i++) out[i * size] = datatype === 'BOOL' ? i % 2 : i + 1;
    return out;
  };
  it.each(DATATYPES.flatMap((d) => [true, false].map((binary) => [d, binary] as const)))('%s sent as binary: %s', (datatype, binary) => {
    const bytes = bytesOf(datatype, 6);
    const framed = ok(encodeInferRequest({ inputs: [{ name: 'x', datatype, shape: [2, 3], data: bytes, binary }], outputs: [{ name: 'y', binary }] }));
    const parsed = ok(parseInferRequestBody(framed.body, framed.headerLength));
    if (parsed.header === null) throw new Error('raw');
    expect(parsed.tensors).toEqual([binary ? bytes : undefined]);
    const response = encodeInferResponse({ model_name: 'm', outputs: [{ name: 'y', datatype, shape: [2, 3], bytes }] }, ok(binaryOutputChoice(parsed.header)));
    const back = ok(parseInferResponseBody(response.body, response.headerLength));
    expect(back.tensors).toEqual([binary ? bytes : undefined]);
    if (!binary) {
      const reencoded = ok(
        encodeInferRequest({ inputs: [{ name: 'x', datatype, shape: [2, 3], data: (back.header.outputs as [{ data: unknown[] }])[0].data, binary: true }] }),
      );
      expect(ok(parseInferRequestBody(reencoded.body, reencoded.headerLength))).toMatchObject({ tensors: [bytes] });
    }
  });
});
