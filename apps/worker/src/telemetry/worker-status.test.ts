import { describe, expect, it } from 'vitest';
import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { WorkerSchema, type WorkerStatus } from '@inferq/contracts';
import { createWorkerStatus, MODEL_EVENTS_KEPT } from './worker-status.ts';

// The API checks formats with Ajv; TypeBox's own checker needs them registered.
if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => !Number.isNaN(Date.parse(v)));

describe('worker status', () => {
  it('keeps the last model events, oldest first, and validates against the contract', () => {
    const status = createWorkerStatus({ workerId: 'w1', device: 'cpu' });
    for (let i = 1; i <= MODEL_EVENTS_KEPT + 5; i++) status.modelEvent({ model: 'mlp', version: i, event: 'loaded', at: new Date().toISOString(), ms: 1.5 });
    status.modelEvent({ model: 'mlp', version: 1, event: 'unloaded', reason: 'idle', at: new Date().toISOString() });
    const snapshot = status.snapshot(
      [{ model: 'mlp', version: 1, provider: 'cpu', loadedAt: new Date().toISOString(), lastUsedAt: new Date().toISOString() }],
      null,
    );
    expect(snapshot.modelEvents).toHaveLength(MODEL_EVENTS_KEPT);
    expect(snapshot.modelEvents![0]!.version).toBe(7);
    expect(snapshot.modelEvents!.at(-1)).toMatchObject({ event: 'unloaded', reason: 'idle' });
    expect(Value.Check(WorkerSchema, snapshot)).toBe(true);
  });

  it("an older worker's status, without the new fields, still validates", () => {
    const { modelEvents: _, ...old } = createWorkerStatus({ workerId: 'w1', device: 'cpu' }).snapshot(
      [{ model: 'mlp', version: 1, provider: 'cpu', loadedAt: new Date().toISOString() }],
      null,
    );
    expect(Value.Check(WorkerSchema, old satisfies Omit<WorkerStatus, 'modelEvents'>)).toBe(true);
  });
});
