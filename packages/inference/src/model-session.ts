import type { RawTensor } from '@inferq/contracts';
import { ModelLoadError } from './model-load-error.ts';
import { providerCandidates } from './providers.ts';
import { spawnThread } from './spawn-thread.ts';
import { ThreadClient } from './thread-client.ts';
import {
  listBuffers,
  ownBatchBuffers,
  type BatchRunResult,
  type FailedProvider,
  type GraphOptimizationLevel,
  type PlacementRun,
  type SessionThreadOptions,
} from './thread-protocol.ts';
import type { ProviderPairingPolicy } from './provider-pairing.ts';

export interface OpenModelSessionOptions {
  modelPath: string;
  /** `cpu`, `cuda:N` or `webgpu:N`. */
  device: string;
  /** Provider names to try in order (`cuda`, `tensorrt`, `webgpu`, `cpu`). @default the device's provider, then cpu */
  providers?: string[] | undefined;
  /** @default onnxruntime's choice (one per physical core) */
  intraOpNumThreads?: number | undefined;
  /** @default onnxruntime's choice (only used with a parallel execution mode) */
  interOpNumThreads?: number | undefined;
  /** @default 'all' (onnxruntime's default) */
  graphOptimizationLevel?: GraphOptimizationLevel | undefined;
  /**
   * A CUDA or TensorRT provider of another release than onnxruntime-node's core: refused (`same-release`, the next
   * provider is tried) or run (`any`), said plainly either way (provider-pairing.ts). @default 'same-release'
   */
  providerPairing?: ProviderPairingPolicy | undefined;
  /** Which sessions get one profiled run at load that says where their nodes ran (node-placement.ts). @default 'gpu' */
  placementRun?: PlacementRun | undefined;
  /**
   * The thread's entry module, when it is not session-thread.ts: the bench's
   * timed device. No configuration sets it. @default session-thread.ts
   */
  threadEntry?: URL | undefined;
}

export interface ModelSession {
  /** The execution provider the session ended on. */
  readonly provider: string;
  /** Providers tried before it, and why each could not start. */
  readonly failedProviders: FailedProvider[];
  /** The provider library's release against the core's (`core 1.29.0 with cuda provider 1.29.0 (…): same release`); CUDA and TensorRT only. */
  readonly providerPairing?: string | undefined;
  /** Where the nodes ran, from the placement run at load (`CUDAExecutionProvider: all 9 nodes`). */
  readonly placement?: string | undefined;
  readonly inputNames: string[];
  readonly outputNames: string[];
  /**
   * Runs the jobs as one batch in the session thread; one result per job, in
   * order. Takes ownership of the input bytes: a tensor whose view covers its
   * whole ArrayBuffer has that buffer moved to the thread (detached here);
   * other views are copied first. Rejects only when the thread dies or the
   * session is closed; a bad job is a failed result, not a rejection.
   */
  infer(jobs: Array<{ inputs: RawTensor[] }>): Promise<BatchRunResult>;
  /** Waits for the batch in flight, releases the session and stops the thread. */
  close(): Promise<void>;
}

const defaultThreadEntry = (): URL => new URL(import.meta.url.endsWith('.ts') ? './session-thread.ts' : './session-thread.js', import.meta.url);

/**
 * Opens a model in a worker thread of its own, trying each execution
 * provider candidate in turn. Rejects with a ModelLoadError
 * (`code: 'MODEL_LOAD_FAILED'`) when the file is missing or corrupt or no
 * provider starts; throws a plain Error for an invalid device or provider name.
 */
export async function openModelSession(options: OpenModelSessionOptions): Promise<ModelSession> {
  const threadOptions: SessionThreadOptions = {
    modelPath: options.modelPath,
    candidates: providerCandidates(options.device, options.providers),
    intraOpNumThreads: options.intraOpNumThreads,
    interOpNumThreads: options.interOpNumThreads,
    graphOptimizationLevel: options.graphOptimizationLevel,
    providerPairing: options.providerPairing,
    placementRun: options.placementRun,
  };
  const worker = spawnThread(options.threadEntry ?? defaultThreadEntry(), threadOptions);
  const client = new ThreadClient(worker);
  let ready;
  try {
    ready = await client.ready;
  } catch (err) {
    await worker.terminate();
    throw err instanceof ModelLoadError ? err : new ModelLoadError(String(err), [], { cause: err });
  }
  let closing: Promise<void> | undefined;

  return {
    provider: ready.provider,
    failedProviders: ready.failedProviders,
    providerPairing: ready.providerPairing,
    placement: ready.placement,
    inputNames: ready.inputNames,
    outputNames: ready.outputNames,

    async infer(jobs) {
      if (closing) throw new Error('model session is closed');
      if (jobs.length === 0) return { inferMs: 0, mode: 'batched', results: [] };
      const inputs = ownBatchBuffers(jobs.map((job) => job.inputs));
      const reply = await client.request((id) => ({ type: 'run', id, jobs: inputs }), listBuffers(inputs.flat()));
      if (reply.type === 'result') return reply.result;
      throw new Error(reply.type === 'failed' ? `batch run failed in the session thread: ${reply.message}` : `unexpected reply ${reply.type}`);
    },

    close() {
      closing ??= (async () => {
        if (!client.failure) await client.request((id) => ({ type: 'close', id })).catch(() => undefined);
        await worker.terminate();
      })();
      return closing;
    },
  };
}
