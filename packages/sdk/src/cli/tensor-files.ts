import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { DataTypes, DATATYPES, elementCount, isDataType, isFixedSizeDataType, type FixedSizeDataType } from '@inferq/contracts';
import type { DecodedJob } from '../job-response.ts';
import { NpyFormatError, readNpy, writeNpy } from '../npy.ts';
import type { ArrayInput } from '../submit-body.ts';
import { bytesOfArray, type TensorArray } from '../tensors.ts';
import { UsageError } from './config.ts';

// Tensor files on the command line: `--input name=@x.npy` (datatype and shape from the .npy header) or
// `--input name=@x.bin:FP32:1x3x224x224` (raw little-endian, row-major); `jobs get --output-dir` writes them back.

export const TENSOR_FLAG_USAGE = 'NAME=@FILE.npy | NAME=@FILE.bin:DATATYPE:SHAPE (e.g. x=@x.bin:FP32:1x3x224x224)';

/** True when an `--input` value names a tensor file rather than a JSON body. */
export const isTensorFlag = (value: string): boolean => /^[^=@]+=@/.test(value);

/** `name=@path`, `name=@path:FP32:1x3` (the path may itself hold colons: the last two fields are the datatype and shape). */
export function parseTensorFlag(value: string): { name: string; path: string; raw?: RawLayout } {
  const eq = value.indexOf('=@');
  const name = value.slice(0, eq);
  const rest = value.slice(eq + 2);
  const match = /^(.*):([A-Z0-9]+):(\d+(?:x\d+)*|scalar)$/.exec(rest);
  if (!match) return { name, path: rest };
  const [, path, datatype, shapeText] = match;
  if (!isDataType(datatype)) throw new UsageError(`--input ${name}: datatype ${datatype} is not one of ${DATATYPES.join(', ')}`);
  if (!isFixedSizeDataType(datatype)) throw new UsageError(`--input ${name}: BYTES tensors are strings: give them in a JSON input file`);
  const shape = shapeText === 'scalar' ? [] : shapeText!.split('x').map(Number);
  return { name, path: path!, raw: { datatype, shape } };
}

/** Reads one `--input NAME=@FILE…` as an input whose bytes the SDK sends binary (or uploads) past its thresholds. */
export async function readTensorFlag(value: string): Promise<ArrayInput> {
  const { name, path, raw } = parseTensorFlag(value);
  return readTensorFile(name, path, raw);
}

type RawLayout = { datatype: FixedSizeDataType; shape: number[] };

/** A tensor file as an input: .npy, or raw little-endian bytes of `raw`'s datatype and shape (their size checked). */
export async function readTensorFile(name: string, path: string, raw: RawLayout | undefined): Promise<ArrayInput> {
  let file: Uint8Array;
  try {
    file = new Uint8Array(await readFile(path));
  } catch (err) {
    throw new UsageError(`--input ${name}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (extname(path).toLowerCase() === '.npy') {
    if (raw) throw new UsageError(`--input ${name}: a .npy file carries its datatype and shape; drop :${raw.datatype}:${raw.shape.join('x')}`);
    try {
      const npy = readNpy(file);
      return { name, datatype: npy.datatype, shape: npy.shape, data: npy.bytes };
    } catch (err) {
      if (err instanceof NpyFormatError) throw new UsageError(`--input ${name}: ${path}: ${err.message}`);
      throw err;
    }
  }
  if (!raw) throw new UsageError(`--input ${name}: ${path} is not .npy: give its datatype and shape, ${name}=@${path}:FP32:1x64`);
  const expected = (elementCount(raw.shape) ?? 0) * DataTypes[raw.datatype].bytes;
  if (file.byteLength !== expected)
    throw new UsageError(`--input ${name}: ${path} is ${file.byteLength} bytes; ${raw.datatype} [${raw.shape.join(', ')}] is ${expected}`);
  return { name, datatype: raw.datatype, shape: raw.shape, data: file };
}

export type OutputFormat = 'npy' | 'bin';

/** A file name from an output name: letters, digits, `.`, `_`, `-`; anything else becomes `_`. */
const fileNameOf = (name: string) => name.replace(/[^\w.-]/g, '_').replace(/^\.+/, '_');

/** Writes each output of a job read binary as `<dir>/<name>.npy` (or raw `.bin`); resolves to the paths written. */
export async function writeOutputFiles(dir: string, job: DecodedJob, format: OutputFormat): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  const paths: string[] = [];
  for (const output of job.outputs ?? []) {
    const { datatype, shape, values } = output;
    // Strings have no .npy or raw layout of their own here: they are written as a JSON array.
    if (!isFixedSizeDataType(datatype)) {
      const path = join(dir, `${fileNameOf(output.name)}.json`);
      await writeFile(path, JSON.stringify(values));
      paths.push(path);
      continue;
    }
    const bytes = bytesOfArray(datatype, values as TensorArray);
    const path = join(dir, `${fileNameOf(output.name)}.${format}`);
    await writeFile(path, format === 'npy' ? writeNpy({ datatype, shape, bytes }) : bytes);
    paths.push(path);
  }
  return paths;
}
