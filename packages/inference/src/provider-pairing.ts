/**
 * Whether the CUDA (or TensorRT) execution provider beside onnxruntime's core library is of the core's own release.
 * onnxruntime checks no version between the two: a provider of another release loads and may misbehave past
 * construction (shared struct layouts). What the release is comes from `onnxruntime-providers.json`, a small record
 * written beside the provider by whoever put it there (the GPU kit, a GPU image); the 200 MB library itself is never
 * read. No record: the provider is taken to be the core's own, as onnxruntime-node's install script fetches it.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

/** `same-release`: a provider of another release is refused (the next provider candidate is tried); `any`: it runs, said plainly. */
export type ProviderPairingPolicy = 'same-release' | 'any';

/** The record beside `libonnxruntime.so.1` that says which release its provider libraries are. */
export interface ProviderRecord {
  /** onnxruntime's release the providers were built from, e.g. `1.29.0`. */
  release: string;
  /** Where they came from, e.g. `npm com.github.asus4.onnxruntime.linux-x64-gpu@0.4.9`. */
  source: string;
  /** GPU architectures the CUDA provider keeps code for, when it was pruned (e.g. [90]). */
  cudaArchitectures?: number[];
}

export const PROVIDER_RECORD_FILE = 'onnxruntime-providers.json';
const PROVIDER_LIBRARY: Record<string, string> = { cuda: 'libonnxruntime_providers_cuda.so', tensorrt: 'libonnxruntime_providers_tensorrt.so' };

export interface ProviderPairing {
  /** `same-release`, `unrecorded` (no record: assumed the core's own), `mismatch` (run under `any`), `refused`, `missing` (no library). */
  verdict: 'same-release' | 'unrecorded' | 'mismatch' | 'refused' | 'missing';
  /** Whether the provider may be tried. */
  usable: boolean;
  /** One plain sentence for the log. */
  line: string;
}

export interface PairingFacts {
  provider: string;
  coreVersion: string;
  /** Whether the provider's library sits beside the core. */
  libraryPresent: boolean;
  record: ProviderRecord | undefined;
  /** Where the core's libraries are, for the sentences. */
  binDir: string;
}

/** The verdict for what was found (pure; `findPairingFacts` reads the files). */
export function judgeProviderPairing(facts: PairingFacts, policy: ProviderPairingPolicy): ProviderPairing {
  const { provider, coreVersion, record } = facts;
  if (!facts.libraryPresent) {
    const line = `no ${PROVIDER_LIBRARY[provider] ?? provider} beside onnxruntime-node ${coreVersion}'s libonnxruntime.so.1 (${facts.binDir})`;
    return { verdict: 'missing', usable: false, line };
  }
  if (!record) {
    const line = `core ${coreVersion} with ${provider} provider of unrecorded release (no ${PROVIDER_RECORD_FILE}): taken to be the core's own`;
    return { verdict: 'unrecorded', usable: true, line };
  }
  const from = `${provider} provider ${record.release} (${record.source})`;
  if (record.release === coreVersion) return { verdict: 'same-release', usable: true, line: `core ${coreVersion} with ${from}: same release` };
  if (policy === 'any') {
    const line = `core ${coreVersion} with ${from}: unsupported pairing, run because CUDA_PROVIDER_PAIRING=any (onnxruntime checks no version between them)`;
    return { verdict: 'mismatch', usable: true, line };
  }
  const line = `core ${coreVersion} with ${from}: unsupported pairing, refused (CUDA_PROVIDER_PAIRING=same-release; set any to run it)`;
  return { verdict: 'refused', usable: false, line };
}

/** Parses a provider record; undefined when it is absent, a string saying why when it is unreadable. */
export function parseProviderRecord(text: string): ProviderRecord | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    return `not JSON: ${(err as Error).message}`;
  }
  const r = value as Partial<ProviderRecord> | null;
  if (!r || typeof r.release !== 'string' || !/^\d+\.\d+\.\d+/.test(r.release) || typeof r.source !== 'string') {
    return 'it needs "release" (e.g. "1.29.0") and "source"';
  }
  return { release: r.release, source: r.source, ...(Array.isArray(r.cudaArchitectures) ? { cudaArchitectures: r.cudaArchitectures } : {}) };
}

/** The folder of the loaded onnxruntime-node's native libraries (its binding loads `libonnxruntime.so.1` from there). */
export function onnxruntimeBinDir(): string {
  const require = createRequire(import.meta.url);
  let dir = dirname(require.resolve('onnxruntime-node'));
  while (!existsSync(join(dir, 'package.json')) && dirname(dir) !== dir) dir = dirname(dir);
  return join(dir, 'bin/napi-v6', process.platform, process.arch);
}

/** Two small reads: whether the provider library is there, and its record. Throws for a record that cannot be read. */
export function findPairingFacts(provider: string, coreVersion: string, binDir = onnxruntimeBinDir()): PairingFacts {
  const recordPath = join(binDir, PROVIDER_RECORD_FILE);
  let record: ProviderRecord | undefined;
  if (existsSync(recordPath)) {
    const parsed = parseProviderRecord(readFileSync(recordPath, 'utf8'));
    if (typeof parsed === 'string') throw new Error(`${recordPath} cannot be read: ${parsed}`);
    record = parsed;
  }
  // The library names are Linux's; elsewhere onnxruntime is left to say what it finds.
  const libraryPresent = process.platform !== 'linux' || existsSync(join(binDir, PROVIDER_LIBRARY[provider] ?? ''));
  return { provider, coreVersion, libraryPresent, record, binDir };
}

/** Providers that are libraries of their own beside the core (so have a release to pair). */
export const isProviderLibrary = (provider: string): boolean => provider in PROVIDER_LIBRARY;
