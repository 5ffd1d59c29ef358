import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestContext, type TestContext } from '@inferq/test-utils';
import { asyncReplicationWarning, readReplicationState } from '../src/connection/replication-state.ts';

// The API's start-up warning for a primary whose failover may lose acknowledged commits. The Patroni test
// (apps/worker/tests/postgres-failover.test.ts) reads a synchronous cluster's state; here, a lone server and the rule.

let t: TestContext;
beforeAll(async () => {
  t = await createTestContext();
});
afterAll(() => t?.close());

describe('the primary replication state', () => {
  it('reads a lone server as no replicas, which needs no warning', async () => {
    const state = await readReplicationState(t.pool);
    expect(state.replicas).toBe(0);
    expect(asyncReplicationWarning(state)).toBeUndefined();
  });

  it('warns for replicas without a synchronous standby, and only then', () => {
    expect(asyncReplicationWarning({ replicas: 2, synchronous: 0, synchronousStandbyNames: '' })).toMatch(
      /2 replica\(s\) but no synchronous standby.*JOB_LOST/,
    );
    expect(asyncReplicationWarning({ replicas: 2, synchronous: 1, synchronousStandbyNames: '"node2"' })).toBeUndefined();
  });
});
