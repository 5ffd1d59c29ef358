import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

export interface TestProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves once a line of output matches. */
  waitForOutput(pattern: RegExp, timeoutMs?: number): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface ProcessOptions {
  /** A command that runs node for us, e.g. `ip netns exec <ns>` (it must exec node, so signals reach node itself). */
  prefix?: string[];
  /** A pipe to the process's stdin (`child.stdin`); closing it tells a long-running helper to stop. */
  stdin?: boolean;
  /** The Node executable, when not this process's own (the bench runs its workers on the Node the images run). */
  node?: string;
}

/** Starts one of the project's entry points (`apps/worker/src/main.ts`, or a built `.js` bundle) as a real process; `nodeArgs` e.g. `--cpu-prof`. */
export function startProcess(
  entry: string,
  env: Record<string, string>,
  nodeArgs: string[] = [],
  args: string[] = [],
  options: ProcessOptions = {},
): TestProcess {
  const loader = entry.endsWith('.ts') ? ['--import', 'tsx'] : [];
  const [command, ...prefixArgs] = [...(options.prefix ?? []), options.node ?? process.execPath];
  const child = spawn(command!, [...prefixArgs, ...nodeArgs, ...loader, resolve(ROOT, entry), ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: [options.stdin ? 'pipe' : 'ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const waiters: Array<{ pattern: RegExp; resolve: () => void }> = [];
  const onData = (chunk: Buffer) => {
    out += chunk.toString();
    if (out.length > 2_000_000) out = out.slice(-1_000_000);
    for (const w of [...waiters])
      if (w.pattern.test(out)) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
  };
  child.stdout!.on('data', onData);
  child.stderr!.on('data', onData);
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return {
    child,
    output: () => out,
    waitForOutput(pattern, timeoutMs = 30_000) {
      if (pattern.test(out)) return Promise.resolve();
      return new Promise((res, rej) => {
        const timer = setTimeout(() => rej(new Error(`process did not print ${pattern} within ${timeoutMs} ms; output:\n${out.slice(-4000)}`)), timeoutMs);
        waiters.push({
          pattern,
          resolve: () => {
            clearTimeout(timer);
            res();
          },
        });
        void exited.then((code) => {
          clearTimeout(timer);
          rej(new Error(`process exited (${code}) before printing ${pattern}; output:\n${out.slice(-4000)}`));
        });
      });
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
