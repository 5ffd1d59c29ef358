/** The environment the bench was started with: service URLs when set, as the Quick start reads them. */
export const loadBenchEnv = (): Record<string, string | undefined> => ({ ...process.env });
