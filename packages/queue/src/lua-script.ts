import { readFileSync } from 'node:fs';
import type { RedisClient } from './connection/connection.ts';

type ScriptCall = (...keysAndArgs: Array<string | number>) => Promise<unknown>;

/** A script file as Redis runs it. */
export interface LuaSource {
  /** The file name, e.g. `fair-priority-assign-2.lua`. */
  file: string;
  /** The text of the file's `--[[ … ]]` header comment. */
  header: string;
  /** The script, its `--- @include "path"` lines replaced by the included files. */
  lua: string;
  /** How many KEYS the header documents (one `KEYS[i]` line each, 1 … n in order). */
  numberOfKeys: number;
}

const HEADER = /^--\[\[([\s\S]*?)\]\]/;
const INCLUDE = /^--- @include "([^"]+)"$/gm;

/** A file's text with each `--- @include "includes/name"` line replaced by `includes/name.lua` (relative to the file), recursively. */
const withIncludes = (url: URL): string => readFileSync(url, 'utf8').replace(INCLUDE, (_, path: string) => withIncludes(new URL(`${path}.lua`, url)));

/**
 * Reads a script file (src/lua/*.lua). It starts with a header comment that
 * documents each KEYS[i] and ARGV[i] on a line of its own, and its name ends
 * with its number of keys (`name-<keys>.lua`, as BullMQ names its scripts);
 * the number of keys comes from the header, and a name that disagrees throws.
 */
export function readLuaSource(url: URL): LuaSource {
  const file = url.pathname.split('/').pop()!;
  const header = HEADER.exec(readFileSync(url, 'utf8'))?.[1];
  if (header === undefined) throw new Error(`${file}: no --[[ … ]] header documenting its KEYS and ARGV`);
  const keys = [...header.matchAll(/^\s*KEYS\[(\d+)\]/gm)].map((m) => Number(m[1]));
  if (keys.some((k, i) => k !== i + 1)) throw new Error(`${file}: its header documents KEYS ${keys.join(', ')}, not KEYS[1] … KEYS[n] in order`);
  const named = /-(\d+)\.lua$/.exec(file)?.[1];
  if (named === undefined || Number(named) !== keys.length)
    throw new Error(`${file}: its header documents ${keys.length} KEYS; name it <name>-${keys.length}.lua`);
  return { file, header, lua: withIncludes(url), numberOfKeys: keys.length };
}

/**
 * A Lua script file of src/lua, by its name, read once (at module load) from beside this module: whichever room
 * defines a script, it is found here, and the server bundles get a copy of src/lua beside them
 * (scripts/build-server.mjs), where this module's URL is the bundle's. Run by its SHA (EVALSHA; ioredis loads it on
 * NOSCRIPT, on each node of a Cluster as needed) rather than sent whole with each call as EVAL does: a kilobyte of
 * script text less to encode and for Redis to hash per call. Defined once per connection under `name`. A call with
 * another number of keys than the header documents is refused (ioredis would shift arguments into KEYS).
 */
export function luaScript(name: string, file: string) {
  const { lua, numberOfKeys } = readLuaSource(new URL(`./lua/${file}`, import.meta.url));
  const defined = new WeakSet<RedisClient>();
  return async (connection: RedisClient, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> => {
    if (keys.length !== numberOfKeys) throw new Error(`${file} takes ${numberOfKeys} keys (its header's KEYS lines), called with ${keys.length}`);
    if (!defined.has(connection)) {
      connection.defineCommand(name, { numberOfKeys, lua });
      defined.add(connection);
    }
    return (connection as unknown as Record<string, ScriptCall>)[name]!(...keys, ...args);
  };
}
