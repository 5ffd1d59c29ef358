import { provideServices } from '@inferq/dev-stack';
import { writeDemoModels } from '@inferq/onnx-model';
import { resolve } from 'node:path';
import { publishTestEnv } from './test-env.ts';

// Real Postgres, Redis and S3 for every test run: the URLs from the environment
// when set (CI), else embedded servers started here (a fresh machine).
export default async function setup(): Promise<() => Promise<void>> {
  const root = resolve(import.meta.dirname, '../../..');
  const services = await provideServices({
    env: process.env,
    dataDir: resolve(root, '.inferq/test-services'),
    log: (line) => console.log(`[test services] ${line}`),
  });
  publishTestEnv(services.env, await writeDemoModels(resolve(root, '.inferq/models')));
  return () => services.stop();
}
