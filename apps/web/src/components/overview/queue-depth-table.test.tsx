// @vitest-environment happy-dom
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, fireEvent, render, screen, within } from '@testing-library/react';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import type { QueueStats } from '@inferq/contracts';
import { QueueDepthTable } from './queue-depth-table.tsx';

const queue = (model: string, paused: boolean): QueueStats => ({
  model,
  high: 0,
  normal: 3,
  low: 0,
  batch: 2,
  active: 0,
  delayed: 0,
  workers: 1,
  paused,
  oldestQueuedS: 12,
});

const json = (status: number, body: unknown) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json' } });

function renderTable(queues: QueueStats[], canPause: boolean) {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false }, mutations: { retry: false } } });
  render(
    <QueryClientProvider client={queryClient}>
      <QueueDepthTable queues={queues} canPause={canPause} />
    </QueryClientProvider>,
  );
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('QueueDepthTable', () => {
  it('marks a paused queue, and offers no buttons to a key that cannot pause', () => {
    renderTable([queue('mlp', true), queue('cnn', false)], false);
    const [mlp, cnn] = screen.getAllByRole('row').slice(1);
    expect(within(mlp!).getByText('paused')).toBeTruthy();
    expect(within(cnn!).queryByText('paused')).toBeNull();
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('resumes a paused queue and pauses another through the API, and shows a refusal', async () => {
    const calls: string[] = [];
    vi.stubGlobal(
      'fetch',
      vi.fn(async (url: string, init?: RequestInit) => {
        calls.push(`${init?.method ?? 'GET'} ${url}`);
        if (url.endsWith('/v1/models/mlp/resume')) return json(200, { ...queue('mlp', false), oldestQueuedS: undefined });
        return json(503, { type: 'about:blank', title: 'The queue is unavailable', status: 503, code: 'QUEUE_UNAVAILABLE' });
      }),
    );
    renderTable([queue('mlp', true), queue('cnn', false)], true);
    fireEvent.click(screen.getByRole('button', { name: 'Resume queue of mlp' }));
    fireEvent.click(screen.getByRole('button', { name: 'Pause queue of cnn' }));
    expect((await screen.findByRole('alert')).textContent).toContain('The queue is unavailable');
    expect(calls).toEqual(['POST /v1/models/mlp/resume', 'POST /v1/models/cnn/pause']);
  });
});
