/**
 * A model that could not be opened: unreadable or corrupt file, no provider
 * that starts, or a session thread that died while loading. `code` is the
 * catalogue code the worker stores on the failed jobs.
 */
export class ModelLoadError extends Error {
  readonly code = 'MODEL_LOAD_FAILED' as const;
  readonly failedProviders: Array<{ provider: string; reason: string }>;

  constructor(message: string, failedProviders: Array<{ provider: string; reason: string }> = [], options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ModelLoadError';
    this.failedProviders = failedProviders;
  }
}
