import { access, constants } from 'node:fs/promises';
import { InferenceSession } from 'onnxruntime-node';
import { providerName } from './providers.ts';
import type { FailedProvider, SessionThreadOptions } from './thread-protocol.ts';

export interface CreatedSession {
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

/**
 * Creates the session on the first provider candidate that starts, recording
 * why each earlier one did not: onnxruntime itself throws on the first
 * provider that cannot start instead of falling back.
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
    try {
      const session = await InferenceSession.create(options.modelPath, {
        executionProviders: [candidate],
        ...(options.intraOpNumThreads === undefined ? {} : { intraOpNumThreads: options.intraOpNumThreads }),
        ...(options.interOpNumThreads === undefined ? {} : { interOpNumThreads: options.interOpNumThreads }),
        ...(options.graphOptimizationLevel === undefined ? {} : { graphOptimizationLevel: options.graphOptimizationLevel }),
      });
      return { session, provider, failedProviders };
    } catch (err) {
      failedProviders.push({ provider, reason: firstLine(err) });
    }
  }
  const reasons = failedProviders.map((f) => `${f.provider}: ${f.reason}`).join('; ');
  throw new SessionLoadError(`model ${options.modelPath} could not be loaded on any execution provider (${reasons})`, failedProviders);
}
