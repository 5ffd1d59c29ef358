/** The environment the bench (or the GPU kit's run) was started with: service URLs when set, as the Quick start reads them. */
export const loadBenchEnv = (): Record<string, string | undefined> => ({ ...process.env });
