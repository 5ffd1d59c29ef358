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
export type LoadFailedReply = { type: 'load-failed'; message: string; failedProviders: FailedProvider[] };
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

/**
 * Makes every tensor's bytes an ArrayBuffer of its own so it can be moved to
 * another thread. A view over part of a larger buffer (Node's Buffer pool, a
 * decoded message) is copied: moving the whole buffer would detach bytes the
 * caller still uses, and cloning it would copy all of it.
 */
export function ownTensorBuffers(tensors: RawTensor[]): RawTensor[] {
  return tensors.map((t) => (coversBuffer(t.data) ? t : { ...t, data: t.data.slice() }));
}

/** postMessage that moves the buffers, or copies them when one cannot be moved (an external or untransferable buffer). */
export function postWithTransfer(port: { postMessage(value: unknown, transfer?: ArrayBuffer[]): void }, message: unknown, transfer: ArrayBuffer[]): void {
  try {
    port.postMessage(message, transfer);
  } catch (err) {
    if ((err as Error)?.name !== 'DataCloneError') throw err;
    port.postMessage(message);
  }
}
