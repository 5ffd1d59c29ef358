import { Ajv2020 } from 'ajv/dist/2020.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from './helpers.ts';

// The OpenAPI document (GET /docs/json) is the API's reference: every operation
// has a summary, a tag, a documented 2xx body and, for each JSON body it takes
// or returns, an example that validates against its own schema.
//
// Examples are written once, as `examples: [...]` on the TypeBox schema.
// @fastify/swagger lifts a body's top-level one onto the media type (`example`,
// or an `examples` map when there are several) and keeps nested ones as JSON
// Schema `examples` arrays; this test checks the media type.

/** 2xx bodies that are not JSON, by operation, and the content type each declares. */
const NON_JSON_SUCCESS: Record<string, string> = {
  'GET /metrics': 'text/plain',
  // Prefer: wait with Accept: application/octet-stream: the framed job, as GET answers it.
  'POST /v1/jobs': 'application/octet-stream',
  'GET /v1/jobs/{id}': 'application/octet-stream',
  'GET /v1/jobs/{id}/events': 'text/event-stream',
  'GET /v1/jobs/{id}/inputs/{index}': 'application/octet-stream',
  'GET /v1/jobs/{id}/outputs/{index}': 'application/octet-stream',
  // A Batch API file's bytes.
  'GET /v1/files/{id}/content': 'application/jsonl',
  // The binary tensor data extension: the JSON header (the schema), then the outputs' bytes.
  'POST /v2/models/{name}/infer': 'application/octet-stream',
  'POST /v2/models/{name}/versions/{version}/infer': 'application/octet-stream',
};

const HTTP_METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'head', 'trace']);

type Json = Record<string, any>;
interface Operation {
  label: string;
  pointer: string;
  op: Json;
}
interface Example {
  where: string;
  schemaPointer: string;
  value: unknown;
}

const escapeSegment = (segment: string | number) => String(segment).replaceAll('~', '~0').replaceAll('/', '~1');
const pointerOf = (segments: (string | number)[]) =>
  segments
    .map(escapeSegment)
    .map((s) => `/${s}`)
    .join('');

function resolvePointer(doc: Json, pointer: string): unknown {
  return pointer
    .split('/')
    .slice(1)
    .reduce<unknown>((node, raw) => {
      const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
      return node !== null && typeof node === 'object' && key in node ? (node as Json)[key] : undefined;
    }, doc);
}

function listOperations(doc: Json): Operation[] {
  return Object.entries(doc.paths as Json).flatMap(([path, item]) =>
    Object.entries(item as Json)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, op]) => ({ label: `${method.toUpperCase()} ${path}`, pointer: pointerOf(['paths', path, method]), op: op as Json })),
  );
}

const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');
const hasExample = (media: Json) => media.example !== undefined || (media.examples !== undefined && Object.keys(media.examples).length > 0);
const successResponses = (op: Json) => Object.entries((op.responses ?? {}) as Json).filter(([status]) => /^2\d\d$/.test(status));

/** What is missing from one operation, each as a short phrase. */
function operationProblems({ label, op }: Operation): string[] {
  const problems: string[] = [];
  if (typeof op.summary !== 'string' || op.summary.trim() === '') problems.push('no summary');
  if (!Array.isArray(op.tags) || op.tags.length === 0) problems.push('no tag');
  const documented = successResponses(op).filter(([, response]) => response.content);
  if (documented.length === 0) problems.push('no 2xx response with a body');
  for (const [status, response] of documented) {
    for (const [mediaType, media] of Object.entries(response.content as Json)) {
      if (!media.schema) problems.push(`${status} ${mediaType}: no schema`);
      if (isJson(mediaType)) {
        if (!hasExample(media)) problems.push(`${status} ${mediaType}: no example`);
      } else if (NON_JSON_SUCCESS[label] !== mediaType) {
        problems.push(`${status} ${mediaType}: not JSON and not an allowed non-JSON body`);
      } else if (!media.schema?.description && !response.description) {
        problems.push(`${status} ${mediaType}: no description of the body`);
      }
    }
  }
  for (const [mediaType, media] of Object.entries((op.requestBody?.content ?? {}) as Json)) {
    if (!media.schema) problems.push(`request ${mediaType}: no schema`);
    if (isJson(mediaType) && !hasExample(media)) problems.push(`request ${mediaType}: no example`);
  }
  return problems;
}

/**
 * Every example in the document with the schema it illustrates: a media type's
 * or parameter's `example` / `examples` map against its `schema`, and a schema's
 * own `examples` array against that schema.
 */
function collectExamples(node: unknown, segments: (string | number)[], out: Example[] = []): Example[] {
  if (node === null || typeof node !== 'object') return out;
  const here = pointerOf(segments);
  const obj = node as Json;
  // A `properties` map is keyed by field names, which may be `example` or `schema`.
  const isPropertyMap = segments.at(-1) === 'properties' || segments.at(-1) === 'patternProperties';
  if (!isPropertyMap) {
    if (Array.isArray(obj.examples))
      obj.examples.forEach((value: unknown, i: number) => out.push({ where: `${here}/examples/${i}`, schemaPointer: here, value }));
    if (obj.schema && typeof obj.schema === 'object') {
      const schemaPointer = `${here}/schema`;
      if (obj.example !== undefined) out.push({ where: `${here}/example`, schemaPointer, value: obj.example });
      if (obj.examples && !Array.isArray(obj.examples)) {
        for (const [name, ex] of Object.entries(obj.examples as Json))
          out.push({ where: `${here}/examples/${escapeSegment(name)}`, schemaPointer, value: ex.value });
      }
    }
  }
  for (const [key, child] of Object.entries(obj)) {
    if (!isPropertyMap && (key === 'example' || key === 'examples')) continue;
    collectExamples(child, [...segments, key], out);
  }
  return out;
}

function collectRefs(node: unknown, segments: (string | number)[], out: { where: string; ref: string }[] = []) {
  if (node === null || typeof node !== 'object') return out;
  for (const [key, child] of Object.entries(node as Json)) {
    if (key === '$ref' && typeof child === 'string') out.push({ where: pointerOf(segments), ref: child });
    else collectRefs(child, [...segments, key], out);
  }
  return out;
}

/**
 * Ajv for the document's dialect (OpenAPI 3.1 is JSON Schema 2020-12). No type
 * coercion, unlike the server's: an example must be right as written. Not
 * strict, because the document's OpenAPI members (paths, info, …) are not
 * schema keywords.
 */
function createExampleValidator(doc: Json) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, logger: false });
  // ajv-formats is not a dependency of ours: these are the formats the document uses.
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', (s: string) => /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/i.test(s) && !Number.isNaN(Date.parse(s)));
  ajv.addFormat('uri', (s: string) => /^[a-z][a-z0-9+.-]*:/i.test(s) && URL.canParse(s));
  ajv.addFormat('binary', true);
  // Added whole, so `#/components/schemas/…` references resolve as they do for a reader.
  ajv.addSchema(doc, 'openapi', undefined, false);
  return (schemaPointer: string, value: unknown): string | undefined => {
    const fragment = schemaPointer.split('/').map(encodeURIComponent).join('/');
    const validate = ajv.getSchema(`openapi#${fragment}`);
    if (!validate) return 'its schema does not compile';
    return validate(value) ? undefined : ajv.errorsText(validate.errors, { dataVar: 'example' });
  };
}

let t: TestApp;
let doc: Json;
beforeAll(async () => {
  t = await buildTestApp();
  const res = await t.server.inject({ method: 'GET', url: '/docs/json' });
  expect(res.statusCode).toBe(200);
  doc = res.json();
});
afterAll(() => t?.close());

describe('the OpenAPI document', () => {
  it('lists the API routes', () => {
    const labels = listOperations(doc).map((o) => o.label);
    expect(labels).toEqual(
      expect.arrayContaining(['POST /v1/jobs', 'GET /v1/jobs/{id}', 'POST /v2/models/{name}/infer', 'POST /v1/embeddings', ...Object.keys(NON_JSON_SUCCESS)]),
    );
  });

  it('gives every operation a summary, a tag, a 2xx body and an example of each JSON body', () => {
    const missing = listOperations(doc).flatMap((o) => operationProblems(o).map((p) => `${o.label}: ${p}`));
    expect(missing).toEqual([]);
  });

  it('has examples that validate against their own schemas', () => {
    const examples = collectExamples(doc, []);
    expect(examples.length).toBeGreaterThan(0);
    const check = createExampleValidator(doc);
    const invalid = examples.flatMap(({ where, schemaPointer, value }) => {
      const error = check(schemaPointer, value);
      return error === undefined ? [] : [`${where}: ${error}`];
    });
    expect(invalid).toEqual([]);
  });

  it('has a job submission example the API accepts as written', async () => {
    expect((await t.registerModel('transformer')).statusCode).toBe(201);
    const example = doc.paths['/v1/jobs'].post.requestBody.content['application/json'].example;
    const res = await t.server.inject({ method: 'POST', url: '/v1/jobs', payload: example, headers: t.auth() });
    expect(res.statusCode, res.body).toBe(202);
  });

  it('resolves every $ref inside the document', () => {
    const dangling = collectRefs(doc, [])
      .filter(({ ref }) => !ref.startsWith('#/') || resolvePointer(doc, ref.slice(1)) === undefined)
      .map(({ where, ref }) => `${where}: ${ref}`);
    expect(dangling).toEqual([]);
  });
});
