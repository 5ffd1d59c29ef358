import { execFileSync } from 'node:child_process';
import { cpus, totalmem, release } from 'node:os';
import { createRequire } from 'node:module';
import type { Pool } from '@inferq/db';

export interface Machine {
  cpu: string;
  cores: number;
  memoryGiB: number;
  os: string;
  node: string;
  onnxruntime: string;
  redis: string;
  postgres: string;
}

const tryRun = (command: string, args: string[]): string | undefined => {
  try {
    return execFileSync(command, args, { encoding: 'utf8', timeout: 5_000 }).trim();
  } catch {
    return undefined;
  }
};

/** What the numbers were measured on: they mean nothing without it. */
export async function describeMachine(deps: { pool: Pool; redisInfo: () => Promise<string> }): Promise<Machine> {
  const require = createRequire(import.meta.url);
  const info = await deps.redisInfo();
  const { rows } = await deps.pool.query('SHOW server_version');
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    os: tryRun('sh', ['-c', '. /etc/os-release && echo "$PRETTY_NAME"']) ?? `Linux ${release()}`,
    node: process.version,
    onnxruntime: (require('onnxruntime-node/package.json') as { version: string }).version,
    redis: /redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown',
    postgres: String(rows[0]?.server_version ?? 'unknown'),
  };
}
