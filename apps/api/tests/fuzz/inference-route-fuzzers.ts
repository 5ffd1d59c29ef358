// Generators for the inference routes beside the job API: the v2 (KServe) model
// routes, infer included, and POST /v1/embeddings.
import fc from 'fast-check';
import { PRIORITIES } from '@inferq/contracts';
import { hostileString, pathSegment, toJsonText } from './hostile-values.ts';
import { brokenJsonText, invalidJobBody, validJobBody } from './job-bodies.ts';
import { binaryInferCases } from './binary-framing-generators.ts';
import { get, JSON_TYPE, type FuzzWorld, type Gen } from './route-helpers.ts';
import type { FuzzCase } from './fuzz-case.ts';

/** A v2 model path: registered names and versions may succeed, hostile or unknown ones must be refused. */
const v2Model = (w: FuzzWorld) =>
  fc.oneof(
    {
      arbitrary: fc.constantFrom('mlp', 'transformer', w.otherModelName, 'mlp/versions/1', 'transformer/versions/1').map((path) => ({ path, known: true })),
      weight: 3,
    },
    fc
      .constantFrom('nope', 'mlp/versions/0', 'mlp/versions/99', 'mlp/versions/01', 'mlp/versions/1.5', 'mlp/versions/-1', 'MLP')
      .map((path) => ({ path, known: false })),
    fc.tuple(pathSegment(hostileString), fc.boolean()).map(([s, versioned]) => ({ path: versioned ? `mlp/versions/${s}` : s, known: false })),
  );

/** GET /v2/models/… routes; `ready` answers 503 MODEL_UNAVAILABLE while no worker runs, as an infer does. */
export const v2ModelGet =
  (suffix: string, waits: boolean, versioned: boolean): Gen =>
  (w) =>
    v2Model(w)
      .filter(({ path }) => path.includes('/versions/') === versioned)
      .map(({ path, known }): FuzzCase => ({
        ...get(`/v2/models/${path}${suffix}`, known ? (waits ? 'any' : 'accept') : 'reject', known ? 'registered model' : 'unknown model'),
        waits,
      }));

/** POST /v2/models/…/infer: the job bodies as v2 bodies. No worker runs while fuzzing, so a valid one gets 503 MODEL_UNAVAILABLE. */
export const v2Infer =
  (versioned: boolean): Gen =>
  (w) => {
    const url = (model: string) => `/v2/models/${model.replace(':', '/versions/')}/infer`;
    // A mutated model that is no reference is sent to mlp: the body is what is being fuzzed.
    const path = (ref: unknown) => {
      const model = typeof ref === 'string' && /^[a-z0-9._-]+(:\d+)?$/.test(ref) ? ref : 'mlp';
      return versioned ? (model.includes(':') ? model : `${model}:1`) : model.split(':')[0]!;
    };
    const post = (u: string, payload: string | Buffer, expect: FuzzCase['expect'], label: string): FuzzCase => ({
      method: 'POST',
      url: u,
      headers: JSON_TYPE,
      payload,
      expect,
      as: 'fuzzer',
      waits: true,
      label,
    });
    return fc.oneof(
      {
        arbitrary: fc
          .tuple(validJobBody, fc.option(fc.record({ id: hostileString, priority: fc.constantFrom(...PRIORITIES) }), { nil: undefined }))
          .map(([b, extra]) =>
            post(
              url(path(b.model)),
              toJsonText({ inputs: b.inputs, ...(extra && { id: extra.id, parameters: { priority: extra.priority, binary_data_output: false } }) }),
              'any',
              'valid v2 body',
            ),
          ),
        weight: 10,
      },
      {
        arbitrary: invalidJobBody.map(({ what, body }) => post(url(path(body.model)), toJsonText({ ...body, model: undefined }), 'reject', `v2 ${what}`)),
        weight: 20,
      },
      {
        arbitrary: fc
          .tuple(
            validJobBody,
            fc.constantFrom<Record<string, unknown>>(
              { outputs: [{ name: 'nope' }] },
              { outputs: [{}] },
              { outputs: 'logits' },
              { parameters: { priority: 'urgent' } },
              { parameters: 1 },
              { id: 1 },
              { id: 'x'.repeat(257) },
              { extra: true },
            ),
          )
          .map(([b, bad]) => post(url(path(b.model)), toJsonText({ inputs: b.inputs, ...bad }), 'reject', `bad v2 field ${Object.keys(bad)[0]}`)),
        weight: 5,
      },
      {
        arbitrary: fc
          .tuple(v2Model(w), validJobBody)
          .filter(([m]) => !m.known)
          .map(([m, b]) => post(`/v2/models/${m.path}/infer`, toJsonText({ inputs: b.inputs }), 'reject', 'unknown model')),
        weight: 3,
      },
      {
        arbitrary: brokenJsonText(validJobBody.map((b) => JSON.stringify({ inputs: b.inputs }))).map((payload) =>
          post(url(versioned ? 'mlp:1' : 'mlp'), payload, 'reject', 'broken JSON'),
        ),
        weight: 3,
      },
      // The binary tensor data extension: valid framings, and each broken one way.
      { arbitrary: binaryInferCases(url(versioned ? 'mlp:1' : 'mlp')), weight: 10 },
    );
  };

/**
 * POST /v1/embeddings. No model here was registered with a tokenizer, so a
 * well-formed request is still refused (MODEL_NOT_EMBEDDING, or the model is
 * unknown); malformed ones must be refused before that, never with a 5xx.
 */
export const embeddings: Gen = (w) => {
  const post = (payload: string, expect: FuzzCase['expect'], label: string, headers: Record<string, string> = JSON_TYPE): FuzzCase => ({
    method: 'POST',
    url: '/v1/embeddings',
    headers,
    payload,
    expect,
    as: 'fuzzer',
    label,
  });
  const model = fc.oneof(fc.constantFrom('mlp', 'transformer', 'transformer:1', w.otherModelName, 'nope'), hostileString);
  const input = fc.oneof(
    hostileString,
    fc.array(hostileString, { minLength: 1, maxLength: 4 }),
    fc.array(fc.nat(2_000), { minLength: 1, maxLength: 8 }),
    fc.array(fc.array(fc.nat(2_000), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 3 }),
  );
  const bad = fc.oneof(
    fc.constant({ what: 'no input', body: { model: 'transformer' } as unknown }),
    fc.constant({ what: 'empty list', body: { model: 'transformer', input: [] } }),
    fc
      .constantFrom<unknown>(1, null, true, [[]], [-1], [1.5], ['a', 1], [[1], 'a'], { text: 'a' })
      .map((bad) => ({ what: `input ${JSON.stringify(bad)}`, body: { model: 'transformer', input: bad } })),
    fc
      .constantFrom<unknown>('int8', 1, null)
      .map((bad) => ({ what: `encoding_format ${String(bad)}`, body: { model: 'transformer', input: 'a', encoding_format: bad } })),
    fc
      .constantFrom<unknown>(0, -1, 1.5, 1e999, 'x')
      .map((bad) => ({ what: `dimensions ${String(bad)}`, body: { model: 'transformer', input: 'a', dimensions: bad } })),
    fc.constant({ what: 'unknown field', body: { model: 'transformer', input: 'a', temperature: 1 } }),
  );
  return fc.oneof(
    { arbitrary: fc.tuple(model, input).map(([m, i]) => post(toJsonText({ model: m, input: i }), 'reject', 'not an embedding model')), weight: 5 },
    { arbitrary: bad.map(({ what, body }) => post(toJsonText(body), 'reject', what)), weight: 5 },
    { arbitrary: fc.jsonValue({ maxDepth: 3 }).map((body) => post(JSON.stringify(body) ?? 'null', 'reject', 'any JSON')), weight: 2 },
    {
      arbitrary: fc.constantFrom('', '{', '{"model":"transformer","input":', "{'input':'a'}").map((payload) => post(payload, 'reject', 'broken JSON')),
      weight: 1,
    },
  );
};
