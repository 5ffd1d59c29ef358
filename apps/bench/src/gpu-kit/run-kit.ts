// `inferq-gpu-kit/run [--device auto|cuda:N|webgpu:N|cpu] [--smoke] [--out dir]`, on the GPU machine:
// checks the GPU and the kit's provider versions, picks cuda:0 or, where CUDA cannot start, webgpu:0,
// runs bench scenario 1 (raw onnxruntime, end to end, worker side) there, and writes the bench report
// plus gpu-kit.md (the GPU, each device tried and why it failed, the headline figures) into --out.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { loadBenchEnv } from '../bench-env.ts';
import { cudaProviderMismatch, MANIFEST_FILE, type KitManifest } from './kit-manifest.ts';
import type { ProbeResult } from './probe-device.ts';

const KIT = resolve(import.meta.dirname, '../../../..');
const NO_GPU_EXIT = 3;
const NO_DEVICE_EXIT = 4;
const { values: args } = parseArgs({
  options: { device: { type: 'string', default: 'auto' }, smoke: { type: 'boolean', default: false }, out: { type: 'string', default: 'gpu-kit-report' } },
});
const log = (line: string) => console.log(`[gpu-kit] ${line}`);
// The run script changes into the kit; --out is relative to where it was typed.
const started = loadBenchEnv();
const out = resolve(started.INFERQ_KIT_CALLER_DIR ?? process.cwd(), args.out);

const manifestPath = join(KIT, MANIFEST_FILE);
if (!existsSync(manifestPath)) throw new Error(`${manifestPath} is missing: run the kit built by \`npm run gpu-kit\`, not the repo`);
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as KitManifest;
const env = kitEnv();
const gpu = describeGpu();
log(gpu ? `GPU: ${gpu}` : 'no NVIDIA GPU: nvidia-smi is not on PATH or found none');

const attempts: ProbeResult[] = [];
const device = chooseDevice();
if (device) {
  log(`running scenario 1 on ${device}${args.smoke ? ' (smoke)' : ''}`);
  const bench = spawnSync(
    process.execPath,
    ['--expose-gc', '--import', 'tsx', 'apps/bench/src/main.ts', '--only', '1', '--device', device, '--out', out, ...(args.smoke ? ['--smoke'] : [])],
    { cwd: KIT, env, stdio: 'inherit' },
  );
  if (bench.status !== 0) process.exit(bench.status ?? 1);
}
await mkdir(out, { recursive: true });
await writeFile(join(out, 'gpu-kit.md'), summary());
log(`${join(out, 'gpu-kit.md')} written`);
if (!device) process.exit(gpu || args.device !== 'auto' ? NO_DEVICE_EXIT : NO_GPU_EXIT);

/** The kit's redis-server, libraries and Vulkan loader on the paths; NVIDIA's Vulkan driver named where the image keeps it apart. */
function kitEnv(): NodeJS.ProcessEnv {
  const system = join(KIT, 'system/usr');
  const joined = (...parts: Array<string | undefined>) => parts.filter(Boolean).join(':');
  const driverFile = (path: string) => ['/usr/local/nvidia/share', '/usr/share', '/etc'].map((dir) => join(dir, path)).find(existsSync);
  const vulkanIcd = driverFile('vulkan/icd.d/nvidia_icd.json');
  const eglVendor = driverFile('glvnd/egl_vendor.d/10_nvidia.json');
  return {
    ...started,
    PATH: joined(join(KIT, 'node/bin'), join(system, 'bin'), started.PATH),
    LD_LIBRARY_PATH: joined(started.LD_LIBRARY_PATH, join(system, 'lib/x86_64-linux-gnu')),
    ...(vulkanIcd && !started.VK_DRIVER_FILES ? { VK_DRIVER_FILES: vulkanIcd } : {}),
    ...(eglVendor && !started.__EGL_VENDOR_LIBRARY_FILENAMES ? { __EGL_VENDOR_LIBRARY_FILENAMES: eglVendor } : {}),
  };
}

function describeGpu(): string | null {
  try {
    const line = execFileSync('nvidia-smi', ['--query-gpu=name,driver_version,memory.total', '--format=csv,noheader', '--id=0'], { encoding: 'utf8', env });
    return line.trim() || null;
  } catch {
    return null;
  }
}

/** --device as given, else cuda:0 where the kit's provider matches and starts, else webgpu:0; null when none runs. */
function chooseDevice(): string | null {
  if (args.device === 'auto' && !gpu) {
    log('nothing to run on: give --device cpu to try the kit without a GPU');
    return null;
  }
  const candidates = args.device === 'auto' ? ['cuda:0', 'webgpu:0'] : [args.device];
  for (const candidate of candidates) {
    const mismatch = candidate.startsWith('cuda') ? cudaProviderMismatch(manifest) : null;
    const result = mismatch ? { device: candidate, ok: false, error: mismatch } : probe(candidate);
    attempts.push(result);
    log(result.ok ? `${candidate}: runs the CNN at ${result.msPerBatch} ms per batch of 32` : `${candidate} cannot start: ${result.error}`);
    if (result.ok) return candidate;
  }
  return null;
}

function probe(candidate: string): ProbeResult {
  const child = spawnSync(process.execPath, ['--import', 'tsx', 'apps/bench/src/gpu-kit/probe-device.ts', candidate], {
    cwd: KIT,
    env,
    encoding: 'utf8',
    timeout: 120_000,
  });
  const last = child.stdout.trim().split('\n').pop() ?? '';
  try {
    return JSON.parse(last) as ProbeResult;
  } catch {
    return {
      device: candidate,
      ok: false,
      error: `the probe ended (${child.signal ?? `exit ${child.status}`}) with no answer: ${child.stderr.trim().split('\n').slice(-2).join(' ')}`,
    };
  }
}

function cudaProviderText(): string {
  if (!manifest.cudaProvider) return 'none';
  return manifest.cudaProvider.version ?? 'of unknown version';
}

function summary(): string {
  const results = join(out, 'results.json');
  const metrics = existsSync(results)
    ? ((JSON.parse(readFileSync(results, 'utf8')) as { results: Array<{ id: string; metrics: Record<string, unknown> }> }).results.find((r) => r.id === '1')
        ?.metrics ?? {})
    : {};
  const figure = (key: string) => `| ${key} | ${metrics[key] ?? '—'} |`;
  return [
    '# The GPU run',
    '',
    `GPU: ${gpu ?? 'none found'}. Kit built ${manifest.builtAt}${manifest.commit ? ` at commit ${manifest.commit}` : ''}: Node ${manifest.node.version}, ` +
      `onnxruntime-node ${manifest.onnxruntimeNode.version}, CUDA execution provider ${cudaProviderText()}.`,
    '',
    '| device | starts | ms per batch of 32 | why not |',
    '| --- | --- | --- | --- |',
    ...attempts.map((a) => `| ${a.device} | ${a.ok ? 'yes' : 'no'} | ${a.msPerBatch ?? '—'} | ${a.error?.replaceAll('|', '/') ?? ''} |`),
    '',
    device
      ? `Scenario 1 ran on ${device}${args.smoke ? ' (smoke run: tiny counts, figures mean nothing)' : ''}; README.md beside this file is its report.`
      : 'Scenario 1 did not run.',
    '',
    '| figure | value |',
    '| --- | --- |',
    ...[
      'worker_provider',
      'raw_onnx_items_per_s',
      'worker_side_items_per_s',
      'worker_side_to_raw_ratio',
      'e2e_items_per_s',
      'e2e_to_raw_ratio',
      'raw_gpu_utilization_mean_percent',
      'worker_side_gpu_utilization_mean_percent',
      'e2e_gpu_utilization_mean_percent',
      'worker_side_main_thread_us_per_job',
    ].map(figure),
    '',
  ].join('\n');
}
