import { randomUUID } from 'node:crypto';
import type { Pool } from '@inferq/db';

/** An API key row to own the jobs a test writes itself (newTestJob); returns its id. */
export async function insertTestOwner(pool: Pool, name: string): Promise<string> {
  const id = randomUUID();
  await pool.query("INSERT INTO api_keys (id, name, prefix, secret_hash, scopes) VALUES ($1, $2, $3, 'x', '{jobs:write}')", [id, name, id.slice(0, 8)]);
  return id;
}
