import type { AdaptiveBatching, ErrorCode, Priority, RawTensor } from '@inferq/contracts';
import { AppError, isAppError } from '@inferq/core';
import { ModelLoadError, type BatchRunResult, type FailedProvider } from '@inferq/inference';
import type { BatchStats } from '../telemetry/batch-stats.ts';
import type { WorkerConfig } from '../config.ts';

/**
 * The messages between a feeder thread (host-proxy.ts) and the worker process's main thread (host-server.ts), which
 * holds what a device has one of: the model sessions, the model health, the status and the metrics. Every message is
 * a structured clone: plain fields only (a PendingJob's `ack` never crosses), tensor bytes moved by transfer lists.
 */

/** What a feeder thread starts with (its workerData): the config main loaded (a thread reads no environment). */
export interface FeederThreadData {
  config: WorkerConfig;
  workerId: string;
  /** 0 to WORKER_FEEDERS − 1: its logs' `feeder` field. */
  index: number;
}

/** What the job metrics read of a job (telemetry/worker-metrics.ts). */
export interface MeasuredJob {
  model: string;
  priority: Priority;
  createdAtMs: number;
}

/** Only the fields the metrics read: a PendingJob holds its queue handle, which cannot be cloned. */
export const measured = (jobs: readonly MeasuredJob[]): MeasuredJob[] => jobs.map(({ model, priority, createdAtMs }) => ({ model, priority, createdAtMs }));

/**
 * A session main lent a feeder for one batch: named across threads by its model, version and `token` (main's handle
 * for the lease), so a discard discards only the session whose run failed, as in process.
 */
export interface LentSession {
  token: number;
  provider: string;
  failedProviders: FailedProvider[];
  providerPairing?: string | undefined;
  placement?: string | undefined;
  inputNames: string[];
  outputNames: string[];
}

/** Feeder → main: calls on the device's objects, each answered by a `reply` with its id. */
export type HostCall =
  | { type: 'get-session'; id: number; model: string; version: number }
  /** The jobs' tensor bytes come in the transfer list. */
  | { type: 'infer'; id: number; token: number; jobs: Array<{ inputs: RawTensor[] }> }
  | { type: 'discard'; id: number; model: string; version: number; token: number }
  /** A lent session given back without a run (ModelSession.close). */
  | { type: 'release'; id: number; token: number }
  | { type: 'fault'; id: number; model: string; version: number; code: string; message: string };

/** What each call answers with. */
export interface HostCallResults {
  'get-session': LentSession;
  /** Its output bytes come in the transfer list. */
  infer: BatchRunResult;
  discard: undefined;
  release: undefined;
  fault: undefined;
}

/** Feeder → main, unanswered: what its batches report to the status and the metrics, and that it has started. */
export type FeederNote =
  | { type: 'batch-started'; batchId: string; model: string; size: number }
  | { type: 'batch-ended'; batchId: string; stats?: BatchStats | undefined }
  | { type: 'adaptive-batching'; state: AdaptiveBatching }
  | { type: 'models-served'; models: string[] }
  | { type: 'metric-batch-started'; jobs: MeasuredJob[] }
  | { type: 'metric-batch-ran'; model: string; size: number; inferMs: number }
  | { type: 'metric-jobs-finished'; jobs: MeasuredJob[]; outcome: 'succeeded' | 'failed' | 'expired' }
  | { type: 'metric-jobs-released'; jobs: MeasuredJob[] }
  | { type: 'metric-jobs-record-lost'; model: string; count: number }
  | { type: 'metric-model-faulted'; model: string; faulted: boolean }
  /** Its first model refresh is done: it consumes every served model's queue. */
  | { type: 'started' };

/** Main → feeder: requests, each answered by a `done` with its id. */
export type FeederControl =
  /** A model's health changed: the feeder mirrors it (isFaulted stays synchronous) and pauses or resumes the model's consumer. */
  | { type: 'model-health'; id: number; model: string; faulted: boolean }
  /** Drain (results stored, jobs acknowledged), then close the feeder's connections. */
  | { type: 'close'; id: number };

export type HostReply = { type: 'reply'; id: number; ok: true; value: unknown } | { type: 'reply'; id: number; ok: false; error: WireError };
export type ControlDone = { type: 'done'; id: number; error?: WireError | undefined };

/** Everything a feeder posts to main, and everything main posts to a feeder. */
export type FeederMessage = HostCall | FeederNote | ControlDone;
export type MainMessage = HostReply | FeederControl;

/** A port either end posts on: a feeder's parentPort, main's Worker, either end of a MessageChannel. */
export interface FeederPort {
  postMessage(value: unknown, transfer?: ArrayBuffer[]): void;
  /** `any`: what Worker and MessagePort declare; each end checks the `type` of what arrives. */
  on(event: 'message', listener: (message: any) => void): unknown;
  /** Lets the thread end once nothing else is left (after a feeder has closed). */
  unref?(): void;
}

/**
 * An error as it crosses threads. A structured clone keeps an Error's message and stack, not its class or fields, and
 * the batch runner decides by them what a failure is (job-errors.ts, node-faults.ts, isDatabaseUnavailable,
 * isStorageUnavailable): an AppError's code, a system or SDK code, S3's `$metadata`, a ModelLoadError's providers.
 */
export interface WireError {
  name: string;
  message: string;
  stack?: string | undefined;
  /** Rebuilt as an AppError with this code. */
  appCode?: ErrorCode | undefined;
  code?: string | number | undefined;
  /** S3's errors carry it (isStorageUnavailable looks for it); only the status is read. */
  metadata?: { httpStatusCode?: number | undefined } | undefined;
  failedProviders?: FailedProvider[] | undefined;
}

export function toWireError(err: unknown): WireError {
  if (!(err instanceof Error)) return { name: 'Error', message: String(err) };
  const e = err as Error & { code?: unknown; $metadata?: { httpStatusCode?: unknown }; failedProviders?: unknown };
  const status = e.$metadata?.httpStatusCode;
  return {
    name: e.name,
    message: e.message,
    stack: e.stack,
    appCode: isAppError(err) ? err.code : undefined,
    code: typeof e.code === 'string' || typeof e.code === 'number' ? e.code : undefined,
    metadata: '$metadata' in e ? { httpStatusCode: typeof status === 'number' ? status : undefined } : undefined,
    failedProviders: Array.isArray(e.failedProviders) ? (e.failedProviders as FailedProvider[]) : undefined,
  };
}

/** The error a feeder's batch runner sees: of the class and with the fields it decides by. */
export function fromWireError(w: WireError): Error {
  let err: Error;
  if (w.appCode) err = new AppError(w.appCode, w.message);
  else if (w.name === 'ModelLoadError') err = new ModelLoadError(w.message, w.failedProviders ?? []);
  else {
    err = Object.assign(new Error(w.message), {
      ...(w.code !== undefined ? { code: w.code } : {}),
      ...(w.metadata ? { $metadata: w.metadata } : {}),
      ...(w.failedProviders ? { failedProviders: w.failedProviders } : {}),
    });
    err.name = w.name;
  }
  if (w.stack) err.stack = w.stack;
  return err;
}
