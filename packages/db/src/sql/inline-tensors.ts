import type { StoredTensor } from '@inferq/contracts';

// Row <-> StoredTensor for inline tensors (migration 0022). In memory an inline
// tensor carries its bytes (`data`); in the row its jsonb entry names their
// offset (`at`, `bytes` long) in the row's bytea column (input_data or
// output_data), which holds the row's inline tensors back to back. A group
// write sends ONE Buffer (binary parameter) with every row's bytes and gives
// each row its slice (data_at, data_len) in the jsonb recordset:
// `substring($n FROM data_at + 1 FOR data_len)` in SQL. Rows written before
// 0022 keep base64 in `b64`, passed through as it is (the tensor store reads it).

/** One row's tensors as the jsonb keeps them, and where the row's bytes are in the group's Buffer (null: none). */
export interface PackedRow {
  tensors: Array<Omit<StoredTensor, 'data'>>;
  dataAt: number | null;
  dataLen: number | null;
}

/** Packs several rows' tensors: the jsonb form of each, and one Buffer of all their inline bytes (null when there are none). */
export function packTensorRows(rows: ReadonlyArray<readonly StoredTensor[]>): { rows: PackedRow[]; data: Buffer | null } {
  const chunks: Uint8Array[] = [];
  let total = 0;
  const packed = rows.map((tensors): PackedRow => {
    const rowStart = total;
    const json = tensors.map(({ data, ...rest }) => {
      if (!data) return rest;
      chunks.push(data);
      total += data.byteLength;
      return { ...rest, at: total - data.byteLength - rowStart };
    });
    return total > rowStart ? { tensors: json, dataAt: rowStart, dataLen: total - rowStart } : { tensors: json, dataAt: null, dataLen: null };
  });
  return { rows: packed, data: total > 0 ? Buffer.concat(chunks, total) : null };
}

/** The SQL for one row's bytes out of the group Buffer `param` (a bytea parameter) given the recordset alias `r`. */
export const rowDataSql = (param: string, r: string): string => `substring(${param}::bytea FROM ${r}.data_at + 1 FOR ${r}.data_len)`;

/**
 * A row's tensors in memory: an inline one (`at`) gets `data`, a Uint8Array
 * view of the row's bytea (no copy); one whose bytes are not in `data` as recorded keeps
 * neither, which the tensor store reads as the wrong size.
 */
export function unpackTensors(tensors: readonly StoredTensor[], data: Buffer | null | undefined): StoredTensor[] {
  return tensors.map((t) => {
    if (t.at === undefined) return t;
    const { at, ...rest } = t;
    // An empty tensor (a 0 dimension) adds no bytes: its row may have none at all.
    if (t.bytes === 0) return { ...rest, data: new Uint8Array(0) };
    // A plain Uint8Array view, not a Buffer: a Buffer's slice() is a view too, where readers expect a copy (an aligned one).
    return data && at + t.bytes <= data.byteLength ? { ...rest, data: new Uint8Array(data.buffer, data.byteOffset + at, t.bytes) } : rest;
  });
}
