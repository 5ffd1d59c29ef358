import { checkTensorBytes, decodeBytesElements, elementCount, LENGTH_PREFIX_BYTES, type RawTensor } from '@inferq/contracts';

const shapeText = (shape: readonly number[]): string => `[${shape.join(',')}]`;

function findInput(job: RawTensor[], name: string, jobIndex: number): RawTensor {
  const tensor = job.find((t) => t.name === name);
  if (!tensor) throw new Error(`job ${jobIndex} has no input "${name}"`);
  return tensor;
}

/** Validates one input of one job against the batch's first (BYTES: its framing and UTF-8) and returns its byte length. */
function checkPart(part: RawTensor, first: RawTensor, jobIndex: number): number {
  if (part.datatype !== first.datatype) {
    throw new Error(`input "${part.name}": job ${jobIndex} is ${part.datatype}, job 0 is ${first.datatype}`);
  }
  if (part.shape.length === 0 || part.shape.length !== first.shape.length || part.shape.some((d, i) => i > 0 && d !== first.shape[i])) {
    throw new Error(
      `input "${part.name}": job ${jobIndex} has shape ${shapeText(part.shape)}, which cannot be stacked on ${shapeText(first.shape)} along dim 0`,
    );
  }
  const problem = checkTensorBytes(part.datatype, part.shape, part.data);
  if (problem) throw new Error(`input "${part.name}": job ${jobIndex} ${problem}`);
  return part.data.byteLength;
}

/**
 * Where each row of a tensor starts in its bytes, plus its end: rows of a
 * fixed-size datatype are all one size; BYTES rows are found by walking the
 * elements (a row is every element past dim 0).
 */
function rowOffsets(output: RawTensor): number[] {
  const rows = output.shape[0]!;
  if (output.datatype !== 'BYTES') {
    const rowBytes = rows === 0 ? 0 : output.data.byteLength / rows;
    if (!Number.isInteger(rowBytes)) throw new Error(`output "${output.name}": ${output.data.byteLength} bytes do not divide into ${rows} rows`);
    return Array.from({ length: rows + 1 }, (_, r) => r * rowBytes);
  }
  const perRow = elementCount(output.shape.slice(1)) ?? 0;
  const elements = decodeBytesElements(output.data, elementCount(output.shape) ?? -1);
  if (!elements.ok) throw new Error(`output "${output.name}": ${elements.detail}`);
  // An element's view starts after its length prefix; a row starts at its first element's prefix.
  const startOf = (e: number) =>
    e === elements.value.length ? output.data.byteLength : elements.value[e]!.byteOffset - output.data.byteOffset - LENGTH_PREFIX_BYTES;
  return Array.from({ length: rows + 1 }, (_, r) => startOf(r * perRow));
}

/**
 * Stacks each named input of every job along dim 0: one allocation and one
 * byte copy per input. Throws when the jobs cannot be stacked (datatype, rank,
 * non-batch dims or byte length disagree). A single job is returned as is.
 */
export function concatBatch(jobs: RawTensor[][], inputNames: string[]): RawTensor[] {
  if (jobs.length === 0) throw new Error('cannot concatenate an empty batch');
  return inputNames.map((name) => {
    const parts = jobs.map((job, j) => findInput(job, name, j));
    const first = parts[0]!;
    const sizes = parts.map((part, j) => checkPart(part, first, j));
    if (parts.length === 1) return first;
    const data = new Uint8Array(sizes.reduce((a, b) => a + b, 0));
    let offset = 0;
    for (const part of parts) {
      data.set(part.data, offset);
      offset += part.data.byteLength;
    }
    const rows = parts.reduce((n, part) => n + part.shape[0]!, 0);
    return { name, datatype: first.datatype, shape: [rows, ...first.shape.slice(1)], data };
  });
}

/**
 * Cuts each output along dim 0 into one slice per job, `itemCounts[j]` rows
 * for job j. The slices are views over the output's bytes (no copy). Throws
 * when an output's dim 0 is not the sum of the item counts: the model is not
 * batch-aligned and the jobs must run one by one.
 */
export function splitBatch(outputs: RawTensor[], itemCounts: number[]): RawTensor[][] {
  const totalRows = itemCounts.reduce((a, b) => a + b, 0);
  const perJob: RawTensor[][] = itemCounts.map(() => []);
  for (const output of outputs) {
    const rows = output.shape[0];
    if (rows !== totalRows) {
      throw new Error(`output "${output.name}" has shape ${shapeText(output.shape)}; expected dim 0 = ${totalRows}, the jobs' item count`);
    }
    const offsets = rowOffsets(output);
    let row = 0;
    itemCounts.forEach((count, j) => {
      const data = output.data.subarray(offsets[row], offsets[row + count]);
      perJob[j]!.push({ name: output.name, datatype: output.datatype, shape: [count, ...output.shape.slice(1)], data });
      row += count;
    });
  }
  return perJob;
}
