import { spawn } from 'node:child_process';
import type { FindExecutable } from './find-executable.ts';

export interface DebianBinary {
  /** Executable names to look for, in order (e.g. `chromium`, `chromium-browser`). */
  names: string[];
  /** The Debian package that provides it. */
  aptPackage: string;
  /** What to tell a user who has to install it themselves. */
  missingMessage: string;
}

/**
 * The path of a system tool the demo and tests need (redis-server, chromium).
 * A fresh Debian box (or container) where we are root gets Debian's package,
 * so the README's commands work with no setup; anywhere else we say exactly
 * what to install rather than guessing at a package manager.
 */
export async function resolveDebianBinary(tool: DebianBinary, options: { findExecutable: FindExecutable; log?: (line: string) => void }): Promise<string> {
  const find = () => tool.names.map(options.findExecutable).find((p) => p !== undefined);
  const found = find();
  if (found) return found;

  const aptGet = options.findExecutable('apt-get');
  if (!aptGet || process.getuid?.() !== 0) throw new Error(tool.missingMessage);

  options.log?.(`${tool.names[0]} not found; installing Debian package ${tool.aptPackage} with apt-get (once)`);
  const installArgs = ['install', '-y', '--no-install-recommends', tool.aptPackage];
  let result = await runCommand(aptGet, installArgs);
  if (!result.ok) {
    // A fresh image ships with empty package lists; refresh once and retry.
    await runCommand(aptGet, ['update']);
    result = await runCommand(aptGet, installArgs);
  }
  const installed = find();
  if (result.ok && installed) return installed;
  throw new Error(`${tool.missingMessage}\napt-get install ${tool.aptPackage} failed:\n${result.outputTail}`);
}

export const REDIS_SERVER: DebianBinary = {
  names: ['redis-server'],
  aptPackage: 'redis-server',
  missingMessage:
    'redis-server was not found on PATH, /usr/bin or /usr/sbin. Install Redis 6.2 or newer ' +
    '(Debian/Ubuntu: `sudo apt-get install redis-server`, macOS: `brew install redis`) ' +
    'or set REDIS_URL to an existing server (e.g. REDIS_URL=redis://127.0.0.1:6379).',
};

export const NFT: DebianBinary = {
  names: ['nft'],
  aptPackage: 'nftables',
  missingMessage:
    'nft was not found on PATH, /usr/sbin or /usr/bin. The hosts-apart tests cut and slow links between network namespaces with it: ' +
    'install nftables (Debian/Ubuntu: `sudo apt-get install nftables`).',
};

export const PROMTOOL: DebianBinary = {
  names: ['promtool'],
  aptPackage: 'prometheus',
  missingMessage:
    'promtool was not found on PATH. The Prometheus rules are checked with it: install Prometheus ' + '(Debian/Ubuntu: `sudo apt-get install prometheus`).',
};

export const NGINX: DebianBinary = {
  names: ['nginx'],
  aptPackage: 'nginx',
  missingMessage:
    "nginx was not found on PATH, /usr/sbin or /usr/bin. The compose stack's nginx config is checked and driven with it: " +
    'install it (Debian/Ubuntu: `sudo apt-get install nginx`, macOS: `brew install nginx`).',
};

export const JQ: DebianBinary = {
  names: ['jq'],
  aptPackage: 'jq',
  missingMessage:
    "jq was not found on PATH. docs/api.md's curl walkthroughs, which a test runs, use it: install it " +
    '(Debian/Ubuntu: `sudo apt-get install jq`, macOS: `brew install jq`).',
};

export const CURL: DebianBinary = {
  names: ['curl'],
  aptPackage: 'curl',
  missingMessage: "curl was not found on PATH. docs/api.md's walkthroughs, which a test runs, use it: install it (Debian/Ubuntu: `sudo apt-get install curl`).",
};

export const CHROMIUM: DebianBinary = {
  names: ['chromium', 'chromium-browser', 'google-chrome'],
  aptPackage: 'chromium',
  missingMessage:
    'Chromium was not found on PATH. The browser tests drive it headless: install it ' +
    '(Debian/Ubuntu: `sudo apt-get install chromium`) or set CHROMIUM_PATH to a Chromium or Chrome binary.',
};

function runCommand(command: string, args: string[]): Promise<{ ok: boolean; outputTail: string }> {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-4_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.once('error', (err) => resolve({ ok: false, outputTail: `${output}\n${err.message}` }));
    child.once('close', (code) => resolve({ ok: code === 0, outputTail: output }));
  });
}
