// @vitest-environment happy-dom
import { afterEach, describe, expect, it } from 'vitest';
import { cleanup, render, screen, within } from '@testing-library/react';
import type { WorkerStatus } from '@inferq/contracts';
import { WorkerCard } from './worker-card.tsx';

afterEach(cleanup);

const now = new Date().toISOString();
const worker: WorkerStatus = {
  workerId: 'node-7-cpu-42',
  hostname: 'node-7',
  device: 'cpu',
  pid: 42,
  startedAt: now,
  lastHeartbeatAt: now,
  modelsServed: ['mlp'],
  modelsLoaded: [],
  currentBatch: null,
  jobsSucceeded: 0,
  jobsFailed: 0,
  batches: 0,
  gpu: null,
};

describe('WorkerCard', () => {
  it('marks a worker that stopped taking a model after a fault of its own, with the fault', () => {
    const fault = {
      model: 'mlp',
      version: 3,
      code: 'MODEL_LOAD_FAILED',
      message: 'The AWS Access Key Id you provided does not exist',
      since: now,
      retryAt: now,
    };
    render(<WorkerCard worker={{ ...worker, ready: false, faults: [fault] }} />);
    expect(screen.getByText('not ready')).toBeTruthy();
    const faults = screen.getByRole('alert', { name: 'Worker faults' });
    expect(within(faults).getByText(/MODEL_LOAD_FAILED: The AWS Access Key Id/)).toBeTruthy();
    expect(within(faults).getByText('mlp v3')).toBeTruthy();
  });

  it('shows neither for a ready worker, nor for an older one that does not report readiness', () => {
    render(<WorkerCard worker={{ ...worker, ready: true, faults: [] }} />);
    render(<WorkerCard worker={worker} />);
    expect(screen.queryByText('not ready')).toBeNull();
    expect(screen.queryByRole('alert')).toBeNull();
  });
});
