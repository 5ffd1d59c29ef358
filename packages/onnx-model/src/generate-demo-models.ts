// `npm run generate:models [dir]`: writes the demo models (default .inferq/models).
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeDemoModels } from './write-demo-models.ts';

const dir = resolve(process.argv[2] ?? '.inferq/models');
for (const model of await writeDemoModels(dir)) {
  const sizeKb = Math.round(statSync(model.path).size / 1024);
  console.log(
    `${model.name.padEnd(12)} ${String(sizeKb).padStart(6)} KB  maxBatchSize=${model.maxBatchSize} maxBatchDelayMs=${model.maxBatchDelayMs}  ${model.path}`,
  );
}
