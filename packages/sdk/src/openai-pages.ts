// OpenAI's list pages (`data`, `last_id`, `has_more`; the next asked with `after`), walked as one sequence.

export interface OpenAiPage<T> {
  data: T[];
  last_id: string | null;
  has_more: boolean;
}

/** Every item of every page, fetching the next only once the last was read. */
export async function* eachOfPages<T, Q extends object>(page: (query: Q & { after?: string }) => Promise<OpenAiPage<T>>, query: Q): AsyncGenerator<T> {
  let after: string | undefined;
  for (;;) {
    const { data, last_id, has_more } = await page({ ...query, after });
    yield* data;
    if (!has_more || last_id === null) return;
    after = last_id;
  }
}
