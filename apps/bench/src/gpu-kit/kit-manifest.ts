/** What a GPU kit carries, written by build-kit.ts as manifest.json at the kit's root. */
export interface KitManifest {
  builtAt: string;
  /** The repo's commit the kit was built from, when it was a git checkout. */
  commit: string | null;
  node: { version: string; source: string };
  /** The project's onnxruntime-node, in the kit's node_modules. */
  onnxruntimeNode: { version: string };
  /** onnxruntime's CUDA execution provider, when the kit carries one. */
  cudaProvider: CudaProviderEntry | null;
  /** Debian packages unpacked under system/ (redis-server and its libraries, the Vulkan loader). */
  systemPackages: string[];
}

interface CudaProviderEntry {
  version: string | null;
  source: string;
  /** The kit's folder holding the provider libraries and their record; absent: beside the project's core (NuGet). */
  dir?: string;
  /** GPU architectures the provider keeps code for, when it was pruned to them. */
  cudaArchitectures?: number[];
  /** onnxruntime-node of the provider's own release, carried for the CUDA run when the project's is another. */
  matchedCore?: { version: string; dir: string };
}

export const MANIFEST_FILE = 'manifest.json';

/** `matched`: run CUDA on a core of the provider's release (the kit's own, when the project's is another); `project`: on the project's. */
export type CudaCoreChoice = 'matched' | 'project';

export interface CudaPlan {
  /** Which onnxruntime-node runs the CUDA provider: the project's, or the one the kit carries for it. */
  core: 'project' | 'matched';
  /** What the worker is told to do with the pairing (its CUDA_PROVIDER_PAIRING). */
  pairing: 'same-release' | 'any';
  /** The pairing, plainly, for the log and gpu-kit.md. */
  line: string;
}

/**
 * How the kit's CUDA provider runs with `choice`, or why it cannot: onnxruntime checks no version between core and
 * provider, and a pair of one release is the only supported one. The project's core with a provider of another release
 * runs only when asked for (`--cuda-core project`), and says so.
 */
export function planCudaPairing(manifest: Pick<KitManifest, 'onnxruntimeNode' | 'cudaProvider'>, choice: CudaCoreChoice = 'matched'): CudaPlan | string {
  const provider = manifest.cudaProvider;
  if (!provider) return 'the kit carries no CUDA execution provider (build it with --cuda-ep npm, a folder or a .nupkg)';
  if (!provider.version) return `the CUDA execution provider from ${provider.source} has no version on record (name it with --cuda-ep-version)`;
  const project = manifest.onnxruntimeNode.version;
  const from = `cuda provider ${provider.version} (${provider.source})`;
  if (provider.version === project) return { core: 'project', pairing: 'same-release', line: `core ${project} with ${from}: same release` };
  if (choice === 'project') {
    return { core: 'project', pairing: 'any', line: `core ${project} with ${from}: unsupported pairing, run because --cuda-core project asked for it` };
  }
  if (provider.matchedCore?.version === provider.version) {
    return {
      core: 'matched',
      pairing: 'same-release',
      line: `core ${provider.version} (carried for CUDA in place of the project's ${project}) with ${from}: same release`,
    };
  }
  return (
    `the CUDA execution provider is ${provider.version} but onnxruntime-node is ${project}, and the kit carries no core of ` +
    `${provider.version}: run with --cuda-core project to try the pair anyway`
  );
}
