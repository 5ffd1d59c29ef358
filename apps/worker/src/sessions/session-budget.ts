/**
 * Memory a loaded session is reckoned to hold, per byte of its ONNX file:
 * onnxruntime keeps the weights once as initialisers, and about as much again
 * goes on pre-packed weights and the activation arena. A rough, usually
 * generous figure; graphs with large activations (big images, long
 * sequences, big batches) can need more. The thread and runtime themselves
 * (some tens of MB per session) are not counted.
 */
const SESSION_BYTES_PER_ARTIFACT_BYTE = 2;

export const estimateSessionBytes = (artifactBytes: number): number => artifactBytes * SESSION_BYTES_PER_ARTIFACT_BYTE;

export interface BudgetedSession {
  key: string;
  estimatedBytes: number;
  lastUsedMs: number;
  /** False while it loads or while a batch holds it: such a session is never unloaded. */
  evictable: boolean;
}

/**
 * The sessions to unload, least recently used first, so that `incomingBytes`
 * more fits in `budgetBytes`; `fits` is false when unloading every evictable
 * one is still not enough (the caller loads anyway and warns). A budget of 0
 * means none.
 */
export function pickEvictions(sessions: readonly BudgetedSession[], incomingBytes: number, budgetBytes: number): { keys: string[]; fits: boolean } {
  if (budgetBytes <= 0) return { keys: [], fits: true };
  let usedBytes = sessions.reduce((sum, s) => sum + s.estimatedBytes, 0);
  const keys: string[] = [];
  const candidates = sessions.filter((s) => s.evictable).sort((a, b) => a.lastUsedMs - b.lastUsedMs);
  for (const s of candidates) {
    if (usedBytes + incomingBytes <= budgetBytes) break;
    keys.push(s.key);
    usedBytes -= s.estimatedBytes;
  }
  return { keys, fits: usedBytes + incomingBytes <= budgetBytes };
}
