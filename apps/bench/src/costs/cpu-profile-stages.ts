import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

// Where a process's CPU goes, by stage of a request: a V8 CPU profile
// (`node --cpu-prof`) read sample by sample, each sample's time given to the
// first stage in the list that any frame of its stack belongs to, so the
// order is a priority (a Redis write made inside the rate limiter is the rate
// limiter's). Idle samples are left out: shares are of the busy time. A
// window picks the measured span out of the whole run (start-up, warm-up and
// shutdown are in the profile too): V8 stamps samples with the monotonic
// clock in µs, the clock of `process.hrtime` (CLOCK_MONOTONIC on Linux), so
// the bench's readings of it bound the span.

/** The parts of a `.cpuprofile` read here. */
export interface CpuProfile {
  /** When the profile began (monotonic clock, µs); each sample is timeDeltas after the one before. */
  startTime: number;
  endTime: number;
  nodes: Array<{ id: number; callFrame: { functionName: string; url: string }; children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

export interface Stage {
  name: string;
  /** Tested against `functionName url` of each frame. */
  frame: RegExp;
}

/** The stages of a submit (POST /v1/jobs), in priority order; the bare route's process is read with the same list. */
export const SUBMIT_STAGES: readonly Stage[] = [
  { name: 'garbage collection', frame: /^\(garbage collector\)/ },
  { name: 'V8, unattributed (compiler, runtime)', frame: /^\(program\)/ },
  { name: 'request logger (a pino child per request)', frame: /createChildLogger/ },
  { name: 'rate limit', frame: /rate-limit|request-counter/ },
  { name: 'authentication', frame: /plugins\/auth\.ts|api-keys-service/ },
  { name: 'metrics', frame: /api-metrics|prom-client/ },
  { name: 'tracing', frame: /plugins\/tracing/ },
  { name: 'Postgres (the group insert)', frame: /insertJobs|\/pg-pool\/|\/pg\/lib\/|\/pg-protocol\// },
  { name: 'Redis (queue add, fair order)', frame: /enqueueJobs|\/bullmq\/|\/ioredis\// },
  { name: 'tensor decoding, signature check', frame: /tensor-intake|submit-body|tensor-slices|tensor-codec|contracts\/src\/base64|contracts\/src\/signature/ },
  { name: 'input storage (inline bytes)', frame: /input-storage|tensor-store|inline-tensors/ },
  { name: 'body read, JSON parse', frame: /binary-body|content-type-parser|secure-json-parse/ },
  { name: 'schema validation', frame: /fastify\/lib\/validation|\/ajv\// },
  { name: 'reply (serialization, write)', frame: /fastify\/lib\/reply|fast-json-stringify/ },
  { name: 'submit handler (job record, ids, grouping)', frame: /jobs-service|jobs-submit|submit-and-wait|job-intake|dataloader|\/uuid\/|bare-fastify-server/ },
  { name: 'Fastify routing, hooks', frame: /\/fastify\/|\/find-my-way\// },
  { name: 'Node HTTP, sockets', frame: /_http_|stream_base_commons|node:net|parserOn/ },
];

const OTHER = 'other';

/** Now on the clock V8 stamps profile samples with (monotonic, µs). */
export const monotonicMicros = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * Each stage's share of the busy (non-idle) time of the samples taken within
 * `window` (monotonic µs; the whole profile without one), in `stages` order
 * then `other`; shares sum to 1 (all 0 when never busy).
 */
export function stageShares(
  profile: CpuProfile,
  stages: readonly Stage[],
  window: { fromUs: number; toUs: number } = { fromUs: -Infinity, toUs: Infinity },
): Array<{ stage: string; share: number }> {
  if (window.fromUs > profile.endTime || window.toUs < profile.startTime)
    throw new Error(`the window ${window.fromUs}–${window.toUs} µs is outside the profile's ${profile.startTime}–${profile.endTime}: not the same clock?`);
  const nodes = new Map(profile.nodes.map((n) => [n.id, n]));
  const parentOf = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parentOf.set(c, n.id);
  // A stack's stage depends only on its leaf node: decide it once per node.
  const stageOfNode = new Map<number, string | null>();
  const stageOf = (leaf: number): string | null => {
    const known = stageOfNode.get(leaf);
    if (known !== undefined) return known;
    const frames: string[] = [];
    for (let id: number | undefined = leaf; id !== undefined; id = parentOf.get(id)) {
      const f = nodes.get(id)?.callFrame;
      if (f) frames.push(`${f.functionName} ${f.url}`);
    }
    const stage = frames[0]?.startsWith('(idle)') ? null : (stages.find((s) => frames.some((f) => s.frame.test(f)))?.name ?? OTHER);
    stageOfNode.set(leaf, stage);
    return stage;
  };
  const time = new Map<string, number>([...stages.map((s): [string, number] => [s.name, 0]), [OTHER, 0]]);
  let busy = 0;
  let at = profile.startTime;
  profile.samples.forEach((leaf, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    at += dt;
    if (at < window.fromUs || at > window.toUs) return;
    const stage = stageOf(leaf);
    if (stage === null) return;
    time.set(stage, time.get(stage)! + dt);
    busy += dt;
  });
  return [...time].map(([stage, t]) => ({ stage, share: busy > 0 ? t / busy : 0 }));
}

/** The main thread's profile that `node --cpu-prof --cpu-prof-dir=dir` wrote (the largest file: a loader's thread writes its own). */
export async function readMainThreadProfile(dir: string): Promise<CpuProfile> {
  const files = (await readdir(dir)).filter((f) => f.endsWith('.cpuprofile'));
  if (files.length === 0) throw new Error(`no .cpuprofile in ${dir}: did the process exit normally?`);
  const texts = await Promise.all(files.map((f) => readFile(join(dir, f), 'utf8')));
  return JSON.parse(texts.reduce((a, b) => (b.length > a.length ? b : a))) as CpuProfile;
}
