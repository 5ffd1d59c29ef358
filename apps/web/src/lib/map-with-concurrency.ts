/**
 * Runs `task` for each index in 0..count-1 with at most `limit` in flight, and
 * settles every one: results come back in index order, failures included.
 */
export async function mapWithConcurrency<T>(count: number, limit: number, task: (index: number) => Promise<T>): Promise<PromiseSettledResult<T>[]> {
  const results = new Array<PromiseSettledResult<T>>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      try {
        results[index] = { status: 'fulfilled', value: await task(index) };
      } catch (reason) {
        results[index] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, lane));
  return results;
}
