/** Polls a condition until it returns a truthy value or the deadline passes (no sleeps in tests). */
export async function waitFor<T>(
  check: () => Promise<T> | T,
  options: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'condition'}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((r) => setTimeout(r, options.intervalMs ?? 50));
  }
}
