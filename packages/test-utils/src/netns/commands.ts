import { execFile } from 'node:child_process';
import { createExecutableFinder } from '@inferq/dev-stack';
import { optionalTestVar } from '../test-env.ts';

/** Runs a system command (ip, nft) and resolves with its stdout; rejects with its stderr. */
export function runCommand(command: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(command, args, { timeout: 15_000 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${command} ${args.join(' ')} failed: ${stderr.trim() || err.message}`, { cause: err }));
      else resolve(stdout);
    });
  });
}

export const findExecutable = createExecutableFinder(optionalTestVar('PATH', ''));

/**
 * Why this machine cannot build network namespaces, or undefined when it can:
 * it takes root (CI runs as root) and iproute2's `ip`.
 */
export function namespacesUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'network namespaces need root (CI runs as root)';
  if (!findExecutable('ip')) return 'iproute2 (`ip`) is not installed';
  return undefined;
}

/** The argv prefix that runs a command inside namespace `ns`. */
export const inNamespace = (ns: string): string[] => ['ip', 'netns', 'exec', ns];
