import { createServer, type IncomingMessage, type Server } from 'node:http';
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, mlpJob, startStack, waitFor, type Stack, type TestProcess } from '@inferq/test-utils';

// OpenTelemetry from the HTTP request through the queue to the worker: the
// API and a worker export to an OTLP/HTTP receiver standing in for a
// collector; one submitted job must show up as one trace (the caller's own
// traceparent honoured) that reaches the worker, and the batch that ran it
// must link back to that trace.

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  links?: Array<{ traceId: string; spanId: string }>;
}
interface ExportedSpan extends OtlpSpan {
  service: string;
}
interface OtlpRequest {
  resourceSpans: Array<{
    resource: { attributes: Array<{ key: string; value: { stringValue?: string } }> };
    scopeSpans: Array<{ spans: OtlpSpan[] }>;
  }>;
}

const spans: ExportedSpan[] = [];
let receiver: Server;
let stack: Stack;
let worker: TestProcess;

/** Reads one OTLP/HTTP JSON request and keeps its spans, each with its service's name. */
async function receiveSpans(req: IncomingMessage): Promise<void> {
  let body = '';
  for await (const chunk of req) body += chunk;
  if (req.url !== '/v1/traces') return;
  for (const rs of (JSON.parse(body) as OtlpRequest).resourceSpans) {
    const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '';
    for (const ss of rs.scopeSpans) for (const span of ss.spans) spans.push({ ...span, service });
  }
}

beforeAll(async () => {
  // An export the receiver cannot read is answered 400 (the exporter logs it), not left as an unhandled rejection.
  receiver = createServer(
    (req, res) =>
      void receiveSpans(req).then(
        () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'),
        (err: unknown) => res.writeHead(400).end(String(err)),
      ),
  ).listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`, OTEL_BSP_SCHEDULE_DELAY: '100' };
  stack = await startStack({ apiEnv: otel });
  await stack.registerModel('mlp', { maxBatchSize: '8', maxBatchDelayMs: '2' });
  worker = await stack.startWorker(otel);
});
afterAll(async () => {
  await stack?.close();
  receiver?.close();
});

describe('traces', () => {
  it('follow a job from the HTTP request through the queue to the batch that ran it', async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await fetch(`${stack.baseUrl}/v1/jobs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_KEY}`, 'content-type': 'application/json', traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
      body: JSON.stringify(mlpJob(1)),
    });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await waitFor(async () => (await stack.request('GET', `/v1/jobs/${id}`)).json.status === 'succeeded', { what: 'the job to succeed' });

    const inTrace = (name: string) => spans.find((s) => s.traceId === traceId && s.name === name);
    const request = await waitFor(async () => inTrace('POST /v1/jobs'), { what: "the API's request span" });
    expect(request.service).toBe('inferq-api');
    expect(request.parentSpanId).toBe('00f067aa0ba902b7');

    const job = await waitFor(async () => inTrace('job mlp'), { what: "the worker's span of the job, in the request's trace" });
    expect(job.service).toBe('inferq-worker');

    // The batch is a trace of its own that links to the request's.
    const batch = spans.find((s) => s.name === 'batch mlp' && s.links?.some((l) => l.traceId === traceId))!;
    expect(batch).toBeDefined();
    expect(job.links?.map((l) => l.spanId)).toContain(batch.spanId);
    const steps = await waitFor(
      async () => {
        const names = spans.filter((s) => s.parentSpanId === batch.spanId).map((s) => s.name);
        return names.includes('store results') ? names : undefined;
      },
      { what: "the batch's step spans" },
    );
    expect(steps).toEqual(expect.arrayContaining(['claim', 'read inputs', 'load model', 'inference', 'store results']));

    // Log lines written while a span is active carry its ids, so logs and traces join.
    expect(stack.api.output()).toContain(`"trace_id":"${traceId}"`);
    expect(worker.output()).toMatch(/"batchId":"[^"]+","trace_id":"[0-9a-f]{32}"[^\n]*"msg":"batch completed"/);
  });

  it('leave health checks and scrapes out', async () => {
    await fetch(`${stack.baseUrl}/healthz`);
    await fetch(`${stack.baseUrl}/metrics`);
    await new Promise((r) => setTimeout(r, 500));
    expect(spans.filter((s) => /healthz|metrics|readyz/.test(s.name))).toEqual([]);
  });
});
