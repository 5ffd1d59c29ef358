/**
 * On the GPU machine, before the CUDA probe: the kit's CUDA provider put where onnxruntime looks for it (beside the
 * `libonnxruntime.so.1` of the core its pairing plan names: the kit's core of the provider's release, swapped in for
 * the project's, or the project's own), and the library path that finds CUDA's runtime and the driver.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ORT_LINUX_BIN } from './cuda-from-npm.ts';
import type { CudaPlan, KitManifest } from './kit-manifest.ts';

export interface InstalledCuda {
  /** What was put where, for gpu-kit.md. */
  describe: string;
  /** Puts the kit back as it was built (the project's core in node_modules, no provider beside it). */
  undo(): void;
}

const DRIVER_DIRS = ['/usr/local/nvidia/lib64', '/usr/local/nvidia/lib'];
/** The lib folders of the machine's Python `nvidia-*` packages (cuBLAS, cudart, cuDNN, cuFFT, cuRAND, NVRTC for CUDA 13). */
const PYTHON_NVIDIA_LIBS = `import glob, os
try:
    import nvidia
except ImportError:
    raise SystemExit(0)
print(":".join(sorted({d for p in nvidia.__path__ for d in glob.glob(os.path.join(p, "*", "lib"))})))`;

const quiet = (command: string, commandArgs: string[]): string => {
  try {
    return execFileSync(command, commandArgs, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};

/** CUDA's libraries from the machine's Python packages, and the driver's folder when the loader's cache lacks libcuda.so.1. */
export function cudaLibraryPath(log: (line: string) => void): string | undefined {
  const dirs = quiet('python3', ['-c', PYTHON_NVIDIA_LIBS]).trim().split(':').filter(Boolean);
  log(
    dirs.length > 0 ? `CUDA libraries: ${dirs.length} folders of Python's nvidia packages` : "CUDA libraries: no Python nvidia packages (the system's, if any)",
  );
  if (!/\blibcuda\.so\.1 /.test(quiet('ldconfig', ['-p']))) {
    const driver = DRIVER_DIRS.filter((dir) => existsSync(join(dir, 'libcuda.so.1')));
    log(driver.length > 0 ? `libcuda.so.1 from ${driver.join(', ')}` : 'libcuda.so.1 is nowhere the kit looks: CUDA will say so');
    dirs.push(...driver);
  }
  return dirs.length > 0 ? dirs.join(':') : undefined;
}

function linkOrCopy(from: string, to: string): void {
  try {
    linkSync(from, to);
  } catch {
    copyFileSync(from, to);
  }
}

/** Makes `plan` so in the kit at `kit`; the returned `undo` reverses it. */
export function installCudaProvider(kit: string, manifest: Pick<KitManifest, 'onnxruntimeNode' | 'cudaProvider'>, plan: CudaPlan): InstalledCuda {
  const provider = manifest.cudaProvider;
  if (!provider) throw new Error('the kit carries no CUDA execution provider');
  const core = join(kit, 'node_modules/onnxruntime-node');
  const renames: Array<[string, string]> = [];
  const rename = (from: string, to: string) => {
    renameSync(from, to);
    renames.push([from, to]);
  };
  let coreText = `onnxruntime-node ${manifest.onnxruntimeNode.version}`;
  if (plan.core === 'matched') {
    if (!provider.matchedCore) throw new Error('the plan asks for a core the kit does not carry');
    rename(core, join(kit, 'cuda/onnxruntime-node-project'));
    rename(join(kit, provider.matchedCore.dir), core);
    coreText = `onnxruntime-node ${provider.matchedCore.version} in place of ${manifest.onnxruntimeNode.version}`;
  }
  const bin = join(core, ORT_LINUX_BIN);
  const placed: string[] = [];
  // A provider from NuGet was copied beside the project's core when the kit was built (no dir of its own).
  if (provider.dir) {
    for (const file of readdirSync(join(kit, provider.dir))) {
      if (existsSync(join(bin, file))) continue;
      linkOrCopy(join(kit, provider.dir, file), join(bin, file));
      placed.push(join(bin, file));
    }
  }
  const files = readdirSync(bin).filter((f) => f.startsWith('libonnxruntime_providers_'));
  return {
    describe: `${coreText}, with ${files.join(', ')} beside its libonnxruntime.so.1`,
    undo() {
      for (const file of placed) rmSync(file, { force: true });
      for (const [from, to] of renames.reverse()) renameSync(to, from);
    },
  };
}
