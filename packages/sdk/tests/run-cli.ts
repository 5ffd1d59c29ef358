import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(import.meta.dirname, '../../..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The `inferq` CLI as a real process against `baseUrl`; `stdin` is what it reads (a confirmation), ended at once. */
export function runCli(o: { baseUrl: string; apiKey: string; stdin?: string; env?: Record<string, string> }, args: string[]): Promise<CliRun> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'packages/sdk/src/cli/main.ts', ...args], {
    cwd: ROOT,
    env: { ...process.env, INFERQ_URL: o.baseUrl, INFERQ_API_KEY: o.apiKey, ...o.env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin.end(o.stdin ?? '');
  return new Promise((res, rej) => {
    child.once('error', rej);
    child.once('close', (code) => res({ code, stdout, stderr }));
  });
}
