import pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { Pool } from '../connection/pool.ts';

// Rows out of Postgres without their bytes turned into text. node-postgres
// reads results in text format only, where a bytea is hex: Postgres encodes
// each byte as two characters (on the embedded Postgres 18, 130-200 µs of its
// CPU for a 12 KiB input on a slow two-core box, ten times the read itself),
// the socket carries twice the bytes, and the client decodes them again.
// `COPY (query) TO STDOUT (FORMAT binary)` sends every column in its binary
// form instead: a bytea as its bytes. The query's columns are chosen to be
// text, int4 or bytea, whose binary forms need no decoding beyond the framing
// read here (pg-copy-streams carries the COPY protocol).

/** A value for a COPY query, which takes no parameters: a quoted literal (pg's escapeLiteral). */
export const literal = (value: string): string => pg.escapeLiteral(value);

/** A binary COPY row: each column's bytes, null for NULL. */
export type CopyRow = Array<Buffer | null>;

/** Runs `query` (a SELECT, or an INSERT/UPDATE/DELETE with RETURNING; no parameters) as a binary COPY and returns its rows. */
export async function copyRows(pool: Pool, query: string): Promise<CopyRow[]> {
  const client = await pool.connect();
  const chunks: Buffer[] = [];
  try {
    const stream = client.query(copyTo(`COPY (${query}) TO STDOUT (FORMAT binary)`));
    for await (const chunk of stream) chunks.push(chunk as Buffer);
  } catch (err) {
    client.release(err as Error);
    throw err;
  }
  client.release();
  return parseBinaryCopy(Buffer.concat(chunks));
}

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');

/** The rows of a binary COPY's output (signature, flags, header extension, then per row a column count and each column's length and bytes; -1 ends). */
export function parseBinaryCopy(data: Buffer): CopyRow[] {
  if (data.length < SIGNATURE.length + 8 || !data.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY stream');
  let at = SIGNATURE.length + 4;
  at += 4 + data.readInt32BE(at);
  const rows: CopyRow[] = [];
  for (;;) {
    const columns = data.readInt16BE(at);
    at += 2;
    if (columns === -1) return rows;
    const row: CopyRow = [];
    for (let i = 0; i < columns; i++) {
      const length = data.readInt32BE(at);
      at += 4;
      if (length === -1) row.push(null);
      else {
        row.push(data.subarray(at, at + length));
        at += length;
      }
    }
    rows.push(row);
  }
}
