/**
 * Which execution provider each node of a GPU session ran on. onnxruntime-node has no API for the placement and
 * prints it only in its verbose log (on the process's stderr), so a GPU session is created with profiling on, runs
 * once on zero-filled inputs right after it loads, and ends profiling: every node that ran has an event naming its
 * provider. Profiling stops there (later runs record nothing), so the cost is one run at load, off the hot path.
 */
import { readdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { InferenceSession, Tensor } from 'onnxruntime-node';
import { ortTensor, type OrtTypedArray } from './ort-tensors.ts';

export interface NodePlacement {
  /** One line for the log, e.g. `CUDAExecutionProvider 12 nodes, CPUExecutionProvider 2 (Shape, Gather)`. */
  line: string;
  /** Nodes that ran in the placement run, by onnxruntime's provider name; absent when not recorded. */
  nodesByProvider?: Record<string, number>;
}

interface ProfileEvent {
  cat?: string;
  name?: string;
  args?: { provider?: string; op_name?: string };
}

const CPU = 'CPUExecutionProvider';
const KERNEL_SUFFIX = '_kernel_time';
const MAX_PLACEMENT_ELEMENTS = 16 * 2 ** 20;

/** Counts the nodes of a profile by provider (each node once, however many events it has), and the CPU's op types. */
export function summarisePlacement(events: readonly ProfileEvent[]): NodePlacement {
  const nodes = new Map<string, { provider: string; op: string }>();
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name?.endsWith(KERNEL_SUFFIX) || !e.args?.provider) continue;
    nodes.set(e.name.slice(0, -KERNEL_SUFFIX.length), { provider: e.args.provider, op: e.args.op_name ?? '?' });
  }
  if (nodes.size === 0) return { line: 'unknown: the placement run recorded no node' };
  const nodesByProvider: Record<string, number> = {};
  for (const { provider } of nodes.values()) nodesByProvider[provider] = (nodesByProvider[provider] ?? 0) + 1;
  const providers = Object.keys(nodesByProvider).sort((a, b) => nodesByProvider[b]! - nodesByProvider[a]! || a.localeCompare(b));
  if (providers.length === 1) return { line: `${providers[0]}: all ${nodes.size} nodes`, nodesByProvider };
  // On a GPU session, what fell to the CPU is the point: onnxruntime puts shape ops there on purpose, anything heavier costs copies.
  const cpuOps = [...new Set([...nodes.values()].filter((n) => n.provider === CPU).map((n) => n.op))].sort();
  const parts = providers.map((p) => `${p} ${nodesByProvider[p]}${p === CPU ? ` (${cpuOps.join(', ')})` : ''}`);
  return { line: `${parts.join(', ')} of ${nodes.size} nodes`, nodesByProvider };
}

type Feeds = Record<string, Tensor>;

const ZERO_ARRAYS: Partial<Record<string, (n: number) => OrtTypedArray>> = {
  float32: (n) => new Float32Array(n),
  float64: (n) => new Float64Array(n),
  float16: (n) => new Uint16Array(n),
  int8: (n) => new Int8Array(n),
  uint8: (n) => new Uint8Array(n),
  bool: (n) => new Uint8Array(n),
  int16: (n) => new Int16Array(n),
  uint16: (n) => new Uint16Array(n),
  int32: (n) => new Int32Array(n),
  uint32: (n) => new Uint32Array(n),
  int64: (n) => new BigInt64Array(n),
  uint64: (n) => new BigUint64Array(n),
};

/** Zero-filled feeds from the session's own input metadata (symbolic dims 1), or why there are none. */
export function zeroFeeds(inputs: readonly InferenceSession.ValueMetadata[]): Feeds | string {
  const feeds: Feeds = {};
  for (const input of inputs) {
    if (!input.isTensor) return `input "${input.name}" is not a tensor`;
    const make = ZERO_ARRAYS[input.type];
    if (!make) return `input "${input.name}" is ${input.type}, which is not zero-filled here`;
    const shape = input.shape.map((d) => (typeof d === 'number' && d >= 0 ? d : 1));
    const elements = shape.reduce((a, b) => a * b, 1);
    if (elements > MAX_PLACEMENT_ELEMENTS) return `input "${input.name}" has ${elements} elements`;
    feeds[input.name] = ortTensor(input.type, make(elements), shape);
  }
  return feeds;
}

/** Runs the profiled session once, ends its profiling and reads the placement; never throws. Removes `profileDir`. */
export async function recordNodePlacement(session: InferenceSession, profileDir: string): Promise<NodePlacement> {
  try {
    const feeds = zeroFeeds(session.inputMetadata);
    let failed: string | undefined;
    if (typeof feeds === 'string') failed = feeds;
    else await session.run(feeds).catch((err: unknown) => (failed = `its run failed: ${(err as Error).message.split('\n')[0]}`));
    session.endProfiling();
    if (failed) return { line: `unknown: no placement run (${failed})` };
    const file = (await readdir(profileDir)).find((f) => f.endsWith('.json'));
    if (!file) return { line: 'unknown: onnxruntime wrote no profile' };
    return summarisePlacement(JSON.parse(await readFile(join(profileDir, file), 'utf8')) as ProfileEvent[]);
  } catch (err) {
    return { line: `unknown: ${(err as Error).message.split('\n')[0]}` };
  } finally {
    await rm(profileDir, { recursive: true, force: true });
  }
}
