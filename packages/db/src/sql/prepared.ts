import { createHash } from 'node:crypto';
import type pg from 'pg';

const names = new Map<string, string>();

/**
 * A named statement: Postgres parses and plans it once per connection (a
 * generic plan after five runs) instead of on every call. For the statements
 * every job runs through (its insert, a claim of jobs whose inputs were carried, and its completion; a claim that
 * reads inputs is a binary COPY, copy-rows.ts, which takes no parameters); the name is a
 * hash of the text, so each variant of a statement is prepared apart.
 */
export function prepared(text: string, values: unknown[]): pg.QueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    name = `inferq_${createHash('sha1').update(text).digest('hex').slice(0, 20)}`;
    names.set(text, name);
  }
  return { name, text, values };
}
