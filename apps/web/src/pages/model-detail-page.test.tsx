// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { MemoryRouter, Route, Routes } from 'react-router';
import type { ModelRoute, ModelVersionStats, Principal, Stats, WorkerStatus } from '@inferq/contracts';
import { ModelDetailPage } from './model-detail-page.tsx';

const NOW = new Date().toISOString();

// Untyped on purpose: only the fields the page reads, so new Model fields do not break the fixture.
const EMBEDDING = { pooling: 'mean', normalize: true, output: 'last_hidden_state', maxTokens: 128, tokenizerSha256: 'e'.repeat(64) };
const version = (v: number, responseCache = false, embedding?: typeof EMBEDDING) => ({
  name: 'mlp',
  version: v,
  sha256: `${v}`.repeat(64),
  sizeBytes: 4096 * v,
  signature: {
    inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, 64] }],
    outputs: [{ name: 'logits', datatype: 'FP32', shape: [-1, 16] }],
    batchable: true,
  },
  batching: { maxBatchSize: 8 * v, maxBatchDelayMs: 5 },
  responseCache,
  embedding,
  createdAt: NOW,
});

const versionStats = (model: string, v: number, fields: Partial<ModelVersionStats>): ModelVersionStats => ({
  model,
  version: v,
  completedPerSec: 1,
  completed: 60,
  failed: 0,
  errorRate: 0,
  queueMsP50: 1,
  queueMsP95: 2,
  queueMsP99: 3,
  inferMsP50: 4,
  inferMsP95: 5,
  inferMsP99: 6,
  avgBatchSize: 2,
  ...fields,
});

const stats = {
  generatedAt: NOW,
  windowMinutes: 15,
  scope: 'all',
  submittedPerSec: 0,
  completedPerSec: 0,
  failedPerSec: 0,
  errorRate: 0,
  avgBatchSize: null,
  queueMsP50: null,
  queueMsP95: null,
  queueMsP99: null,
  inferMsP50: null,
  inferMsP95: null,
  inferMsP99: null,
  workersOnline: 1,
  queues: [],
  workers: [],
  series: [],
  models: [
    versionStats('mlp', 1, { completed: 300 }),
    versionStats('mlp', 2, { completed: 100, failed: 25, errorRate: 0.2 }),
    versionStats('cnn', 1, { completed: 7 }),
  ],
} satisfies Stats;

const worker = {
  workerId: 'w-cpu-1',
  hostname: 'box',
  device: 'cpu',
  pid: 1,
  startedAt: NOW,
  lastHeartbeatAt: NOW,
  modelsServed: ['mlp'],
  modelsLoaded: [
    { model: 'mlp', version: 2, provider: 'cpu', loadedAt: NOW },
    { model: 'cnn', version: 1, provider: 'cpu', loadedAt: NOW },
  ],
  currentBatch: null,
  jobsSucceeded: 0,
  jobsFailed: 0,
  batches: 0,
  gpu: null,
} satisfies WorkerStatus;

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

/** The API as the page sees it: two versions of mlp, a 3:1 split, and a PUT that answers `putAnswer`; `latest` changes v2. */
function stubApi(
  principal: Principal,
  putAnswer: (routes: ModelRoute[]) => Response,
  { latest = {}, workers = [worker] }: { latest?: object; workers?: WorkerStatus[] } = {},
) {
  let routes: ModelRoute[] = [
    { version: 1, weight: 3 },
    { version: 2, weight: 1 },
  ];
  const puts: ModelRoute[][] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (url: string, init?: RequestInit) => {
      const path = decodeURIComponent(url.split('?')[0]!);
      if (path === '/v1/me') return json(200, principal);
      if (path === '/v1/stats') return json(200, stats);
      if (path === '/v1/workers') return json(200, { items: workers });
      if (path === '/v1/models/mlp') return json(200, { ...version(2, true, EMBEDDING), ...latest, routing: routes });
      if (path === '/v1/models/mlp/versions') return json(200, { items: [{ ...version(2, true, EMBEDDING), ...latest }, version(1)] });
      if (path === '/v1/models/mlp/routing' && init?.method === 'PUT') {
        const sent = (JSON.parse(String(init.body)) as { versions: ModelRoute[] }).versions;
        puts.push(sent);
        const answer = putAnswer(sent);
        if (answer.ok) routes = sent;
        return answer;
      }
      if (path === '/v1/models/mlp/routing') return json(200, { name: 'mlp', versions: routes, updatedAt: routes.length ? NOW : null });
      return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
    }),
  );
  return { puts };
}

function renderPage() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={['/models/mlp']}>
        <Routes>
          <Route path="/models/:name" element={<ModelDetailPage />} />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const reader: Principal = { keyId: '0190f4d2-7b3a-7cc1-8a1e-3f1c2b4d5e6f', scopes: ['jobs:read'], admin: false, weight: 1 };
const operator: Principal = { ...reader, scopes: ['jobs:read', 'models:write'] };
const saved = (routes: ModelRoute[]) => json(200, { name: 'mlp', versions: routes, updatedAt: NOW });

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('ModelDetailPage', () => {
  it('shows versions, the split in percent, this model’s per-version figures and where it is loaded, read-only without models:write', async () => {
    stubApi(reader, saved);
    renderPage();
    const routing = await screen.findByRole('table', { name: 'Routing table' });
    expect(
      within(routing)
        .getAllByRole('row')
        .slice(1)
        .map((r) => r.textContent),
    ).toEqual(['v1375.0%', 'v2125.0%']);
    expect(screen.queryByRole('button', { name: 'Save routing' })).toBeNull();
    expect(screen.queryByLabelText('Weight of v1')).toBeNull();

    const versions = await screen.findByRole('table', { name: 'Registered versions' });
    expect(within(versions).getAllByRole('row')).toHaveLength(3);
    expect(within(versions).getByText('v2').parentElement?.textContent).toContain('latest');
    expect(screen.getAllByText('response cache on').length).toBeGreaterThan(0);
    expect(within(versions).getByText('response cache off')).toBeTruthy();
    // v2 serves embeddings, v1 does not: the badge in the header and on v2's row, with v2's settings.
    expect(screen.getAllByText('embeddings')).toHaveLength(2);
    const [v2Row, v1Row] = within(versions).getAllByRole('row').slice(1);
    expect(v2Row?.textContent).toContain('embeddingsmean pooling, normalized, output last_hidden_state, ≤ 128 tokens');
    expect(v1Row?.textContent).not.toContain('embeddings');

    const figures = await screen.findByRole('table', { name: 'Finished jobs per model version' });
    expect(
      within(figures)
        .getAllByRole('row')
        .slice(1)
        .map((r) => (r as HTMLTableRowElement).cells[0]?.textContent),
    ).toEqual(['mlp:2', 'mlp:1']);
    expect(within(figures).getByText('20.0%')).toBeTruthy();
    expect(within(figures).queryByText('cnn:1')).toBeNull();

    const workers = await screen.findByRole('table', { name: 'Workers with mlp loaded' });
    expect(within(workers).getAllByRole('row')).toHaveLength(2);
    expect(within(workers).getByText('w-cpu-1')).toBeTruthy();
  });

  it('shows, for an auto model, each worker’s chosen size and delay with the curve it measured', async () => {
    const adaptive = {
      model: 'mlp',
      latencyTargetMs: 250,
      maxBatchSize: 16,
      maxBatchDelayMs: 4,
      itemsPerS: 2000,
      reason: 'best throughput within the latency target',
      curve: [
        { items: 16, inferMs: 8, deviationMs: 0.5, samples: 40 },
        { items: 1, inferMs: 2, deviationMs: 0.1, samples: 12 },
      ],
    };
    stubApi(reader, saved, {
      latest: { batching: { maxBatchSize: 64, maxBatchDelayMs: 20, mode: 'auto', latencyTargetMs: 250 } },
      workers: [{ ...worker, adaptiveBatching: [adaptive, { ...adaptive, model: 'cnn' }] }],
    });
    renderPage();
    const section = await screen.findByRole('region', { name: 'Adaptive batching' });
    const card = (await within(section).findByRole('heading', { name: 'w-cpu-1 · cpu' })).closest('section')!;
    expect(card.textContent).toContain('16 jobs, waits 4 ms');
    expect(card.textContent).toContain(`${(2000).toLocaleString()} items/s`);
    expect(card.textContent).toContain('best throughput within the latency target');
    expect(within(card).getByRole('img').getAttribute('aria-label')).toBe(
      `Items per second by batch size: 1 → 500 items/s, 16 → ${(2000).toLocaleString()} items/s; chosen size 16`,
    );
    const table = within(card).getByRole('table', { name: 'Inference time per batch size of mlp on w-cpu-1' });
    expect(
      within(table)
        .getAllByRole('row')
        .slice(1)
        .map((r) => [...(r as HTMLTableRowElement).cells].map((c) => c.textContent)),
    ).toEqual([
      ['1', '2 ms', '± 0.10 ms', '12'],
      ['16', '8 ms', '± 0.50 ms', '40'],
    ]);
    // Only this model's entry, and the versions table shows the bounds.
    expect(within(section).getAllByRole('img')).toHaveLength(1);
    expect(within(await screen.findByRole('table', { name: 'Registered versions' })).getByText('auto ≤ 64 / ≤ 20 ms, p99 ≤ 250 ms')).toBeTruthy();
  });

  it('says the curve appears once a worker has run batches, while no worker reports the auto model', async () => {
    stubApi(reader, saved, { latest: { batching: { maxBatchSize: 64, maxBatchDelayMs: 20, mode: 'auto', latencyTargetMs: null } } });
    renderPage();
    const section = await screen.findByRole('region', { name: 'Adaptive batching' });
    expect(await within(section).findByText('No measurements yet')).toBeTruthy();
    expect(section.textContent).toMatch(/the curve appears here once a worker has run batches/);
    expect(section.textContent).toContain('under 100 ms');
  });

  it('has no adaptive batching section for a fixed model', async () => {
    stubApi(reader, saved);
    renderPage();
    await screen.findByRole('table', { name: 'Registered versions' });
    expect(screen.queryByRole('region', { name: 'Adaptive batching' })).toBeNull();
  });

  it('saves a 50/50 split, and promotes or removes through the same Save', async () => {
    const { puts } = stubApi(operator, saved);
    renderPage();
    fireEvent.change(await screen.findByLabelText('Weight of v1'), { target: { value: '50' } });
    fireEvent.change(screen.getByLabelText('Weight of v2'), { target: { value: '50' } });
    expect(screen.getByLabelText('Share of v1').textContent).toBe('50.0%');
    expect(screen.getByRole('status').textContent).toBe('Unsaved changes');
    fireEvent.click(screen.getByRole('button', { name: 'Save routing' }));
    expect(await screen.findByText('Routing saved')).toBeTruthy();
    expect(puts).toEqual([
      [
        { version: 1, weight: 50 },
        { version: 2, weight: 50 },
      ],
    ]);

    fireEvent.click(screen.getByRole('button', { name: 'Promote v2' }));
    expect((screen.getByLabelText('Weight of v1') as HTMLInputElement).value).toBe('');
    expect(screen.getByLabelText('Share of v2').textContent).toBe('100.0%');
    fireEvent.click(screen.getByRole('button', { name: 'Remove routing' }));
    expect(screen.getByText(/No routing: .* latest version, v2/)).toBeTruthy();
    fireEvent.click(screen.getByRole('button', { name: 'Save routing' }));
    expect(await screen.findByText('Routing saved')).toBeTruthy();
    expect(puts.at(-1)).toEqual([]);
  });

  it('shows the server’s problem detail when Save is refused, and keeps the draft', async () => {
    const problem = {
      type: 'about:blank',
      title: 'Request validation failed',
      status: 400,
      code: 'VALIDATION_FAILED',
      detail: 'routing table: at least one weight must be above 0',
    };
    stubApi(operator, () => json(400, problem));
    renderPage();
    fireEvent.change(await screen.findByLabelText('Weight of v1'), { target: { value: '0' } });
    fireEvent.change(screen.getByLabelText('Weight of v2'), { target: { value: '0' } });
    fireEvent.click(screen.getByRole('button', { name: 'Save routing' }));
    const alert = await screen.findByRole('alert');
    expect(alert.textContent).toContain('routing table: at least one weight must be above 0');
    expect((screen.getByLabelText('Weight of v1') as HTMLInputElement).value).toBe('0');
  });

  it('checks weights are whole numbers before sending anything', async () => {
    const { puts } = stubApi(operator, saved);
    renderPage();
    fireEvent.change(await screen.findByLabelText('Weight of v1'), { target: { value: '1.5' } });
    expect(screen.getByRole('alert').textContent).toMatch(/Weight of v1: a whole number/);
    expect((screen.getByRole('button', { name: 'Save routing' }) as HTMLButtonElement).disabled).toBe(true);
    expect(puts).toEqual([]);
  });
});

describe('ModelDetailPage: retiring a version', () => {
  /** Two versions of mlp, v1 routed; DELETE /v1/models/mlp:N answers 409 while the table routes N and reroute is not asked for. */
  function stubRetire(principal: Principal) {
    const retired = new Map<number, string>();
    let routes: ModelRoute[] = [{ version: 1, weight: 1 }];
    const deletes: string[] = [];
    const withState = (v: number) => ({ ...version(v), ...(retired.has(v) ? { retiredAt: retired.get(v) } : {}) });
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init?: RequestInit) => {
        const [rawPath, query = ''] = url.split('?');
        const path = decodeURIComponent(rawPath!);
        if (path === '/v1/me') return json(200, principal);
        if (path === '/v1/stats') return json(200, stats);
        if (path === '/v1/workers') return json(200, { items: [worker] });
        if (path === '/v1/models/mlp/versions') return json(200, { items: [withState(2), withState(1)] });
        if (path === '/v1/models/mlp/routing') return json(200, { name: 'mlp', versions: routes, updatedAt: NOW });
        if (path === '/v1/models/mlp:1' && init?.method === 'DELETE') {
          deletes.push(query);
          if (!query.includes('reroute=true'))
            return json(409, {
              type: 'about:blank',
              title: "The model's routing table sends traffic to the version",
              status: 409,
              code: 'MODEL_VERSION_ROUTED',
              detail: 'the routing table of model "mlp" sends unversioned jobs to version 1 (weight 1 of 1)',
            });
          retired.set(1, NOW);
          routes = [];
          return json(200, { name: 'mlp', versions: [{ version: 1, retiredAt: NOW, unfinishedJobs: 3 }], routing: [] });
        }
        if (path === '/v1/models/mlp') return json(200, { ...version(2), routing: routes });
        return json(404, { type: 'about:blank', title: 'Not found', status: 404, code: 'NOT_FOUND' });
      }),
    );
    return { deletes };
  }

  it('shows the retention card, with its editor only for models:write', async () => {
    const retention = { retentionS: 259_200, effectiveS: 259_200, source: 'model', inputRetentionS: 0, updatedAt: NOW };
    stubApi(reader, saved, { latest: { retention } });
    renderPage();
    const card = (await screen.findByRole('heading', { name: 'Retention' })).closest('section')!;
    expect(within(card).getByText('3d')).toBeTruthy();
    expect(within(card).getByText('override')).toBeTruthy();
    expect(within(card).queryByRole('button', { name: 'Change retention of mlp' })).toBeNull();
    cleanup();
    stubApi(operator, saved, { latest: { retention } });
    renderPage();
    expect(await screen.findByRole('button', { name: 'Change retention of mlp' })).toBeTruthy();
  });

  it('offers no Retire button without models:write', async () => {
    stubRetire(reader);
    renderPage();
    await screen.findByRole('table', { name: 'Registered versions' });
    expect(screen.queryByRole('button', { name: 'Retire v1' })).toBeNull();
  });

  it('asks first, shows the routing refusal with its reason, then retires with reroute and shows the version retired', async () => {
    const { deletes } = stubRetire(operator);
    renderPage();
    const table = await screen.findByRole('table', { name: 'Registered versions' });
    fireEvent.click(await within(table).findByRole('button', { name: 'Retire v1' }));
    const dialog = screen.getByRole('alertdialog', { name: 'Retire v1 of mlp?' });
    expect(dialog.textContent).toContain('This cannot be undone.');
    expect(deletes).toEqual([]);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Retire v1' }));
    const refusal = await within(dialog).findByRole('alert');
    expect(refusal.textContent).toContain('The routing table sends this version traffic');
    expect(refusal.textContent).toContain('sends unversioned jobs to version 1 (weight 1 of 1)');
    expect(deletes).toEqual(['']);

    fireEvent.click(within(dialog).getByRole('button', { name: 'Retire and take it out of routing' }));
    expect(await within(table).findByText('3 jobs still to finish')).toBeTruthy();
    expect(deletes).toEqual(['', 'reroute=true']);
    const v1Row = within(table).getAllByRole('row')[2]!;
    expect(v1Row.textContent).toContain('retired');
    expect(within(v1Row).queryByRole('button', { name: 'Retire v1' })).toBeNull();
    // v2 is still active and may be retired.
    expect(within(table).getByRole('button', { name: 'Retire v2' })).toBeTruthy();
    expect(screen.queryByRole('alertdialog')).toBeNull();
  });

  it('lets Cancel close the question without sending anything', async () => {
    const { deletes } = stubRetire(operator);
    renderPage();
    fireEvent.click(await screen.findByRole('button', { name: 'Retire v2' }));
    fireEvent.click(within(screen.getByRole('alertdialog')).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('alertdialog')).toBeNull();
    expect(deletes).toEqual([]);
  });
});
