import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parse } from 'yaml';

// docker-compose.yml as `docker compose config` would see it with no .env:
// anchors and merge keys resolved, ${VAR:-default} replaced by its default.

export const repoRoot = resolve(import.meta.dirname, '../..');

export interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[] | string;
  entrypoint?: string[] | string;
  environment?: Record<string, string | number | boolean | null>;
  ports?: string[];
  volumes?: Array<string | { type: string; source?: string; target: string }>;
  depends_on?: Record<string, { condition: string }> | string[];
  healthcheck?: { test: string[] | string; disable?: boolean };
  deploy?: {
    replicas?: number;
    resources?: { reservations?: { devices?: Array<{ driver?: string; device_ids?: string[]; count?: number | string; capabilities?: string[] }> } };
  };
  profiles?: string[];
  restart?: string;
  stop_grace_period?: string;
  networks?: Record<string, { aliases?: string[] } | null> | string[];
}

export interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
  [key: string]: unknown;
}

/** Compose's interpolation: $$, $VAR, ${VAR}, ${VAR:-d}, ${VAR-d}, ${VAR:?e}, ${VAR?e}, ${VAR:+r}, ${VAR+r}. */
function interpolate<T>(value: T, env: Record<string, string | undefined>, unset: string[] = []): T {
  if (typeof value === 'string') {
    return value.replace(
      /\$\$|\$\{([A-Za-z_]\w*)(?:(:?)([-?+])([^}]*))?\}|\$([A-Za-z_]\w*)/g,
      (match, braced?: string, colon?: string, op?: string, arg?: string, bare?: string) => {
        if (match === '$$') return '$';
        const name = (braced ?? bare)!;
        const raw = env[name];
        const missing = raw === undefined || (colon === ':' && raw === '');
        if (op === '-') return missing ? arg! : raw!;
        if (op === '+') return missing ? '' : arg!;
        if (op === '?') {
          if (missing) throw new Error(`${name} is required: ${arg}`);
          return raw!;
        }
        if (raw === undefined) unset.push(name);
        return raw ?? '';
      },
    ) as T;
  }
  if (Array.isArray(value)) return value.map((v) => interpolate(v, env, unset)) as T;
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, interpolate(v, env, unset)])) as T;
  }
  return value;
}

export function readComposeFile(env: Record<string, string | undefined> = {}): { compose: ComposeFile; unset: string[] } {
  const raw = parse(readFileSync(resolve(repoRoot, 'docker-compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
  const unset: string[] = [];
  const compose = interpolate(raw, env, unset);
  return { compose, unset: [...new Set(unset)] };
}

/** A service's environment as the strings a process sees. */
export function serviceEnv(service: ComposeService): Record<string, string> {
  return Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, v === null ? '' : String(v)]));
}
