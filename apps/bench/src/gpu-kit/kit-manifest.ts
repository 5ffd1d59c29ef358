/** What a GPU kit carries, written by build-kit.ts as manifest.json at the kit's root. */
export interface KitManifest {
  builtAt: string;
  /** The repo's commit the kit was built from, when it was a git checkout. */
  commit: string | null;
  node: { version: string; source: string };
  onnxruntimeNode: { version: string };
  /** onnxruntime's CUDA execution provider, when the kit carries one. */
  cudaProvider: { version: string | null; source: string } | null;
  /** Debian packages unpacked under system/ (redis-server and its libraries, the Vulkan loader). */
  systemPackages: string[];
}

export const MANIFEST_FILE = 'manifest.json';

/**
 * Why the kit's CUDA provider cannot be used with its onnxruntime-node, or null when it can:
 * onnxruntime loads a provider library of its own release only (same major.minor.patch).
 */
export function cudaProviderMismatch(manifest: Pick<KitManifest, 'onnxruntimeNode' | 'cudaProvider'>): string | null {
  const provider = manifest.cudaProvider;
  if (!provider) return 'the kit carries no CUDA execution provider (build it with --cuda-ep, or after ONNXRUNTIME_NODE_INSTALL=cuda12 npm ci)';
  if (!provider.version) return `the CUDA execution provider from ${provider.source} has no version on record (name it with --cuda-ep-version)`;
  if (provider.version !== manifest.onnxruntimeNode.version) {
    return `the CUDA execution provider is ${provider.version} but onnxruntime-node is ${manifest.onnxruntimeNode.version}: they must be the same release`;
  }
  return null;
}
