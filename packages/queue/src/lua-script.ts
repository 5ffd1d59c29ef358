import type { RedisClient } from './connection.ts';

type ScriptCall = (...keysAndArgs: Array<string | number>) => Promise<unknown>;

/**
 * A Lua script run by its SHA (EVALSHA; ioredis loads it on NOSCRIPT, on
 * each node of a Cluster as needed) rather than sent whole with each call as
 * EVAL does: a kilobyte of script text less to encode and for Redis to hash
 * per call. Defined once per connection under `name`.
 */
export function luaScript(name: string, numberOfKeys: number, lua: string) {
  const defined = new WeakSet<RedisClient>();
  return (connection: RedisClient, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> => {
    if (!defined.has(connection)) {
      connection.defineCommand(name, { numberOfKeys, lua });
      defined.add(connection);
    }
    return (connection as unknown as Record<string, ScriptCall>)[name]!(...keys, ...args);
  };
}
