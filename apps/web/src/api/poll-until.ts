/**
 * A `refetchInterval` that polls every `intervalMs` until `isDone` holds for the data, then stops: a detail page keeps
 * asking while its record can still change, and not once it has finished. No data yet counts as not done.
 */
export function pollUntil<T>(isDone: (data: T) => boolean, intervalMs: number) {
  return (query: { state: { data: T | undefined } }): number | false => {
    const { data } = query.state;
    return data !== undefined && isDone(data) ? false : intervalMs;
  };
}
