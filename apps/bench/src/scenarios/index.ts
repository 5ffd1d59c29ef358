import type { Scenario } from '../scenario.ts';
import { batchingEfficiency } from './1-batching-efficiency.ts';
import { queueOverhead } from './2-queue-overhead.ts';
import { submitLatency } from './3-submit-latency.ts';
import { priorityIsolation } from './4-priority-isolation.ts';
import { depth } from './5-depth.ts';
import { batchSizeSweep } from './6-batch-size-sweep.ts';
import { embeddingsAndCache } from './7-embeddings-and-cache.ts';
import { adaptiveBatching } from './8-adaptive-batching.ts';
import { deadlines } from './9-deadlines.ts';
import { fairness } from './10-fairness.ts';
import { redisCluster } from './11-redis-cluster.ts';
import { storageRetention } from './12-storage-retention.ts';
import { yearOfData } from './13-year-of-data.ts';
import { batchApi } from './14-batch-api.ts';
import { soak } from './soak.ts';

/** Every scenario, in report order. */
export const SCENARIOS: Scenario[] = [
  batchingEfficiency,
  queueOverhead,
  submitLatency,
  priorityIsolation,
  depth,
  batchSizeSweep,
  embeddingsAndCache,
  adaptiveBatching,
  deadlines,
  fairness,
  redisCluster,
  storageRetention,
  yearOfData,
  batchApi,
  soak,
];
