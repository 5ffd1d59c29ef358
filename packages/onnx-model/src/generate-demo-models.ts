// `npm run generate:models [dir] [resnet50 …]`: writes the demo models (default .inferq/models), plus the on-demand ones named.
import { statSync } from 'node:fs';
import { resolve } from 'node:path';
import { writeDemoModels, writeOnDemandModel } from './write-demo-models.ts';

const dir = resolve(process.argv[2] ?? '.inferq/models');
const models = await writeDemoModels(dir);
for (const name of process.argv.slice(3)) models.push(await writeOnDemandModel(dir, name));
for (const model of models) {
  const sizeKb = Math.round(statSync(model.path).size / 1024);
  console.log(
    `${model.name.padEnd(12)} ${String(sizeKb).padStart(6)} KB  maxBatchSize=${model.maxBatchSize} maxBatchDelayMs=${model.maxBatchDelayMs}  ${model.path}`,
  );
}
