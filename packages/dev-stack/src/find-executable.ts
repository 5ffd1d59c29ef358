import { accessSync, constants } from 'node:fs';
import { delimiter, join } from 'node:path';

/** Finds an executable by name; undefined when there is none. Injectable so tests can pretend a binary is missing. */
export type FindExecutable = (name: string) => string | undefined;

// Debian puts some daemons in sbin, which a non-login root shell may lack on PATH.
const EXTRA_DIRS = ['/usr/local/bin', '/usr/bin', '/usr/sbin', '/bin', '/sbin'];

/** Searches `pathEnv` (a PATH value; the caller reads it from its environment), then the standard system directories. */
export function createExecutableFinder(pathEnv = ''): FindExecutable {
  const dirs = [...new Set([...pathEnv.split(delimiter).filter(Boolean), ...EXTRA_DIRS])];
  return (name) => {
    for (const dir of dirs) {
      const candidate = join(dir, name);
      try {
        accessSync(candidate, constants.X_OK);
        return candidate;
      } catch {
        // not in this directory
      }
    }
    return undefined;
  };
}
