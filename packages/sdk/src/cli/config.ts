// The one place the CLI reads its settings: flags first, then the environment.

const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface CliConfig {
  baseUrl: string;
  apiKey: string;
  /** Machine-readable output: JSON on stdout instead of short lines. */
  json: boolean;
}

export interface ConfigFlags {
  url?: string;
  'api-key'?: string;
  json?: boolean;
}

/** A mistake in how the CLI was called; exit status 2. */
export class UsageError extends Error {
  override name = 'UsageError';
}

export function loadCliConfig(flags: ConfigFlags, env: Readonly<Record<string, string | undefined>> = process.env): CliConfig {
  const apiKey = flags['api-key'] ?? env.INFERQ_API_KEY;
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set INFERQ_API_KEY');
  const baseUrl = flags.url ?? env.INFERQ_URL ?? DEFAULT_URL;
  if (!/^https?:\/\//.test(baseUrl)) throw new UsageError(`the API URL must start with http:// or https://, not ${JSON.stringify(baseUrl)}`);
  return { baseUrl, apiKey, json: flags.json ?? false };
}
