import { access, constants, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { env, InferenceSession } from 'onnxruntime-node';
import { recordNodePlacement, type NodePlacement } from './node-placement.ts';
import { findPairingFacts, isProviderLibrary, judgeProviderPairing, type ProviderPairing } from './provider-pairing.ts';
import { providerName } from './providers.ts';
import type { FailedProvider, SessionLoadNotes, SessionThreadOptions } from './thread-protocol.ts';

export interface CreatedSession extends SessionLoadNotes {
  session: InferenceSession;
  provider: string;
  failedProviders: FailedProvider[];
}

/** A model that loaded on no provider; carries every provider's reason. */
export class SessionLoadError extends Error {
  readonly failedProviders: FailedProvider[];

  constructor(message: string, failedProviders: FailedProvider[]) {
    super(message);
    this.name = 'SessionLoadError';
    this.failedProviders = failedProviders;
  }
}

const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).trim().split('\n')[0]!;

/** The release pairing of a provider that is a library of its own (cuda, tensorrt); undefined for the others. */
function checkPairing(provider: string, options: SessionThreadOptions): ProviderPairing | undefined {
  if (!isProviderLibrary(provider)) return undefined;
  try {
    return judgeProviderPairing(findPairingFacts(provider, env.versions.node ?? 'of unknown version'), options.providerPairing ?? 'same-release');
  } catch (err) {
    return { verdict: 'refused', usable: false, line: firstLine(err) };
  }
}

/** A placement run's profile goes to a folder of its own; none when this session gets no placement run. */
async function placementDir(provider: string, options: SessionThreadOptions): Promise<string | undefined> {
  const run = options.placementRun ?? 'gpu';
  const wanted = run === 'always' || (run === 'gpu' && provider !== 'cpu');
  return wanted ? mkdtemp(join(tmpdir(), 'inferq-placement-')) : undefined;
}

const unrecordedPlacement = (provider: string): NodePlacement => ({
  line: provider === 'cpu' ? 'cpu: every node (a CPU session)' : `${provider}: placement not recorded`,
});

/**
 * Creates the session on the first provider candidate that starts, recording
 * why each earlier one did not: onnxruntime itself throws on the first
 * provider that cannot start instead of falling back. A CUDA or TensorRT
 * candidate is tried only when its library pairs with the core as the policy
 * allows (provider-pairing.ts); a GPU session then runs once for its node
 * placement (node-placement.ts).
 */
export async function createSessionWithFallback(options: SessionThreadOptions): Promise<CreatedSession> {
  try {
    // Checked once up front so a missing file is reported as such, not as every provider failing.
    await access(options.modelPath, constants.R_OK);
  } catch (err) {
    throw new SessionLoadError(`model file ${options.modelPath} cannot be read: ${firstLine(err)}`, []);
  }
  const failedProviders: FailedProvider[] = [];
  for (const candidate of options.candidates) {
    const provider = providerName(candidate);
    const pairing = checkPairing(provider, options);
    if (pairing && !pairing.usable) {
      failedProviders.push({ provider, reason: pairing.line });
      continue;
    }
    const profileDir = await placementDir(provider, options);
    let session;
    try {
      session = await InferenceSession.create(options.modelPath, {
        executionProviders: [candidate],
        ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
        ...(options.interOpNumThreads === undefined ? {} : { interOpNumThreads: options.interOpNumThreads }),
        ...(options.graphOptimizationLevel === undefined ? {} : { graphOptimizationLevel: options.graphOptimizationLevel }),
        ...(profileDir ? { enableProfiling: true, profileFilePrefix: join(profileDir, 'placement') } : {}),
      });
    } catch (err) {
      if (profileDir) await rm(profileDir, { recursive: true, force: true });
      failedProviders.push({ provider, reason: pairing && pairing.verdict !== 'same-release' ? `${firstLine(err)} [${pairing.line}]` : firstLine(err) });
      continue;
    }
    const placement = profileDir ? await recordNodePlacement(session, profileDir) : unrecordedPlacement(provider);
    return { session, provider, failedProviders, providerPairing: pairing?.line, placement: placement.line };
  }
  const reasons = failedProviders.map((f) => `${f.provider}: ${f.reason}`).join('; ');
  throw new SessionLoadError(`model ${options.modelPath} could not be loaded on any execution provider (${reasons})`, failedProviders);
}
