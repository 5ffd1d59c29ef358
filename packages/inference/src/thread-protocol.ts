import type { RawTensor } from '@inferq/contracts';
import type { ProviderPairingPolicy } from './provider-pairing.ts';
import type { ProviderCandidate } from './providers.ts';

/** The messages between a ModelSession and its session thread, and the batch result they carry. */

export type JobResult = { ok: true; outputs: RawTensor[] } | { ok: false; code: 'INFERENCE_FAILED' | 'INPUT_DATA_INVALID'; message: string };

export interface BatchRunResult {
  /** Time spent inside session.run calls only, summed over every run this batch needed. */
  inferMs: number;
  /** 'batched': one session.run served every valid job; 'single': the jobs ran one by one. */
  mode: 'batched' | 'single';
  /** One per job, in the order the jobs were given. */
  results: JobResult[];
  /** Why a batch of several jobs ran one by one (the batched run threw, or its outputs could not be split). */
  fallbackReason?: string;
}

export interface FailedProvider {
  provider: string;
  reason: string;
}

export type GraphOptimizationLevel = 'disabled' | 'basic' | 'extended' | 'layout' | 'all';

/** What a session thread receives as workerData. */
export interface SessionThreadOptions {
  modelPath: string;
  candidates: ProviderCandidate[];
  intraOpNumThreads?: number | undefined;
  interOpNumThreads?: number | undefined;
  graphOptimizationLevel?: GraphOptimizationLevel | undefined;
  /** Whether a CUDA or TensorRT provider of another release than the core is refused or run. @default 'same-release' */
  providerPairing?: ProviderPairingPolicy | undefined;
  /** Which sessions get a placement run at load (node-placement.ts). @default 'gpu' */
  placementRun?: PlacementRun | undefined;
}

/** `gpu`: sessions on any provider but cpu; `always`: cpu ones too; `never`. */
export type PlacementRun = 'gpu' | 'always' | 'never';

/** What a session thread learned at load besides its provider: the provider's release pairing and where its nodes ran. */
export interface SessionLoadNotes {
  /** The provider library's release against the core's, when the session is on a CUDA or TensorRT provider. */
  providerPairing?: string | undefined;
  /** Where the nodes ran: `CUDAExecutionProvider: all 9 nodes`, or `cpu: every node (a CPU session)`. */
  placement?: string | undefined;
}

export type ThreadRequest = { type: 'run'; id: number; jobs: RawTensor[][] } | { type: 'close'; id: number };

export type ReadyReply = {
  type: 'ready';
  provider: string;
  failedProviders: FailedProvider[];
  inputNames: string[];
  outputNames: string[];
} & SessionLoadNotes;
type LoadFailedReply = { type: 'load-failed'; message: string; failedProviders: FailedProvider[] };
export type RequestReply =
  { type: 'result'; id: number; result: BatchRunResult } | { type: 'failed'; id: number; message: string } | { type: 'closed'; id: number };
export type ThreadReply = ReadyReply | LoadFailedReply | RequestReply;

const coversBuffer = (view: Uint8Array): boolean => view.buffer instanceof ArrayBuffer && view.byteOffset === 0 && view.byteLength === view.buffer.byteLength;

/** Every distinct ArrayBuffer under the tensors, each listed once (a buffer listed twice fails postMessage). */
export function listBuffers(tensors: Iterable<RawTensor>): ArrayBuffer[] {
  const buffers = new Set<ArrayBuffer>();
  for (const t of tensors) if (t.data.buffer instanceof ArrayBuffer && t.data.buffer.byteLength > 0) buffers.add(t.data.buffer);
  return [...buffers];
}

/** Where a packed tensor may start: a multiple of the widest element (8 bytes), so a typed array views it in place. */
const PACK_ALIGN = 8;

/**
 * Makes every tensor's bytes movable to another thread without detaching bytes the caller still uses: a tensor whose
 * view covers an ArrayBuffer of its own moves as it is; the views over part of a larger buffer (Node's Buffer pool,
 * a Redis reply that carried a batch's inputs, a decoded message) are copied, all of a batch's into one new buffer,
 * each at an aligned offset. One allocation and one buffer to move a batch, not one a tensor: the worker's main
 * thread paid a buffer, its tracking and its collection for each job's input.
 */
export function ownBatchBuffers(jobs: RawTensor[][]): RawTensor[][] {
  let bytes = 0;
  let views = 0;
  for (const inputs of jobs)
    for (const t of inputs)
      if (!coversBuffer(t.data)) {
        bytes = alignUp(bytes) + t.data.byteLength;
        views++;
      }
  if (views === 0) return jobs;
  const packed = new Uint8Array(bytes);
  let at = 0;
  return jobs.map((inputs) =>
    inputs.map((t) => {
      if (coversBuffer(t.data)) return t;
      at = alignUp(at);
      packed.set(t.data, at);
      const data = packed.subarray(at, at + t.data.byteLength);
      at += t.data.byteLength;
      return { ...t, data };
    }),
  );
}

const alignUp = (n: number): number => Math.ceil(n / PACK_ALIGN) * PACK_ALIGN;

/** postMessage that moves the buffers, or copies them when one cannot be moved (an external or untransferable buffer). */
export function postWithTransfer(port: { postMessage(value: unknown, transfer?: ArrayBuffer[]): void }, message: unknown, transfer: ArrayBuffer[]): void {
  try {
    port.postMessage(message, transfer);
  } catch (err) {
    if ((err as Error)?.name !== 'DataCloneError') throw err;
    port.postMessage(message);
  }
}
