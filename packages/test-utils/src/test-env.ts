// The test run's environment, in one place: global setup publishes the service
// URLs and the demo models into it, and test files read them back from here.
import { dirname } from 'node:path';
import { writeOnDemandModel } from '@inferq/onnx-model';

export interface DemoModelFile {
  name: string;
  path: string;
  maxBatchSize: number;
  maxBatchDelayMs: number;
  tokenizerPath?: string;
}

const DEMO_MODELS_VAR = 'INFERQ_DEMO_MODELS';

/** Called by global setup: the variables reach every test worker process. */
export function publishTestEnv(services: Record<string, string>, demoModels: DemoModelFile[]): void {
  Object.assign(process.env, services, { [DEMO_MODELS_VAR]: JSON.stringify(demoModels) });
}

export function requiredTestVar(name: string): string {
  const v = process.env[name];
  if (!v) throw new Error(`${name} is not set; run tests through vitest so global setup provides it`);
  return v;
}

export const optionalTestVar = (name: string, fallback: string): string => process.env[name] || fallback;

export const demoModels = (): DemoModelFile[] => JSON.parse(requiredTestVar(DEMO_MODELS_VAR)) as DemoModelFile[];

export function demoModel(name: string): DemoModelFile {
  const model = demoModels().find((m) => m.name === name);
  if (!model) throw new Error(`no demo model ${name}`);
  return model;
}

/**
 * Demo model `name`, written first when it is an on-demand one (`resnet50`, ~100 MB, left out of the default set) into
 * the published models' folder, and published in this process, so demoModel(name) and registerModel find it afterwards.
 */
export async function provideDemoModel(name: string): Promise<DemoModelFile> {
  const models = demoModels();
  const published = models.find((m) => m.name === name);
  if (published) return published;
  const model = await writeOnDemandModel(dirname(models[0]!.path), name);
  process.env[DEMO_MODELS_VAR] = JSON.stringify([...models, model]);
  return model;
}

/** Set by a vitest project (vitest.config.ts) to run its files on another Redis topology: `cluster` or `sentinel`. */
export const TEST_REDIS_TOPOLOGY_VAR = 'INFERQ_TEST_REDIS';

/** Where global setup publishes a topology's REDIS_URL. */
export const topologyUrlVar = (topology: string): string => `${TEST_REDIS_TOPOLOGY_VAR}_${topology.toUpperCase()}_URL`;

/** The REDIS_URL for this test file: its project's topology, else the shared single node. */
export function testRedisUrl(): string {
  const topology = process.env[TEST_REDIS_TOPOLOGY_VAR];
  return topology ? requiredTestVar(topologyUrlVar(topology)) : requiredTestVar('REDIS_URL');
}
