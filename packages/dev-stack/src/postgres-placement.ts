import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, chown, cp, lstat, mkdir, mkdtemp, readdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { binaryPath, type PostgresBinaries } from './postgres-binaries.ts';
import { ServiceStartError } from './service-start-error.ts';
import { ensureSystemUser, succeedsAs, type UserIds } from './system-user.ts';

/** Where, as root, the binaries and clusters go when the `postgres` user cannot reach the clone. */
export const DEFAULT_RELOCATION_BASE = '/var/lib/inferq';
const COMPLETE_MARKER = '.complete';

export interface PostgresPlacement {
  binaries: PostgresBinaries;
  dataDir: string;
  /** The user postgres runs as; undefined: this process's own. */
  runAs?: UserIds;
}

export interface PlacePostgresOptions {
  binaries: PostgresBinaries;
  dataDir: string;
  relocationBase: string;
  log?: (line: string) => void;
}

/**
 * Postgres refuses to run as root, so as root it runs as the system user
 * `postgres`, which may reach neither node_modules nor the data directory (a
 * clone under /root, mode 0700). Then the binaries are copied once to
 * `<base>/postgres-<version>` and the cluster lives in `<base>/data/<hash of
 * the data directory's path>`. Any other user runs postgres as itself, from
 * where npm put it.
 */
export async function placePostgres(options: PlacePostgresOptions): Promise<PostgresPlacement> {
  const { relocationBase, log } = options;
  await mkdir(dirname(options.dataDir), { recursive: true });
  if (process.getuid?.() !== 0) {
    await mkdir(options.dataDir, { recursive: true });
    return { binaries: options.binaries, dataDir: options.dataDir };
  }

  const runAs = await ensureSystemUser('postgres').catch((err: unknown) => {
    throw new ServiceStartError(
      'Postgres',
      `Postgres refuses to run as root and the system user "postgres" is missing and could not be created (${(err as Error).message})`,
      'create it (`useradd --system --user-group postgres`), run as a non-root user, or set DATABASE_URL to an existing server',
      { cause: err },
    );
  });

  let binaries = options.binaries;
  if (!(await runsPostgres(runAs, binaries))) {
    binaries = await copyBinaries(binaries, relocationBase);
    log?.(`the system user "postgres" cannot reach ${options.binaries.dir}; using a copy of the Postgres binaries in ${binaries.dir}`);
    if (!(await runsPostgres(runAs, binaries))) {
      throw new ServiceStartError(
        'Postgres',
        `the system user "postgres" cannot run ${binaryPath(binaries, 'postgres')}`,
        `let others into ${relocationBase} and its parent directories (chmod o+rx), or set DATABASE_URL to an existing server`,
      );
    }
  }

  let dataDir = options.dataDir;
  if (!(await succeedsAs(runAs, 'test', ['-x', dirname(dataDir)]))) {
    dataDir = join(relocationBase, 'data', createHash('sha256').update(resolve(options.dataDir)).digest('hex').slice(0, 16));
    await makeOpenDir(relocationBase);
    await makeOpenDir(join(relocationBase, 'data'));
    log?.(`the system user "postgres" cannot reach ${options.dataDir}; the cluster lives in ${dataDir}`);
  }
  await mkdir(dataDir, { recursive: true });
  await chown(dataDir, runAs.uid, runAs.gid);
  return { binaries, dataDir, runAs };
}

function runsPostgres(runAs: UserIds, binaries: PostgresBinaries): Promise<boolean> {
  return succeedsAs(runAs, binaryPath(binaries, 'postgres'), ['--version']);
}

async function makeOpenDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await chmod(dir, 0o755);
}

/** A complete copy at `<base>/postgres-<version>`, made once: copied to a temp dir, marked complete, then renamed into place. */
async function copyBinaries(from: PostgresBinaries, base: string): Promise<PostgresBinaries> {
  const target = join(base, `postgres-${from.version}`);
  const copied = { dir: target, version: from.version };
  if (existsSync(join(target, COMPLETE_MARKER))) return copied;
  await makeOpenDir(base);
  const temp = await mkdtemp(join(base, `.${basename(target)}-`));
  try {
    await cp(from.dir, temp, { recursive: true, verbatimSymlinks: true });
    await restoreSymlinks(temp);
    await openUp(temp);
    await writeFile(join(temp, COMPLETE_MARKER), `copied from ${from.dir}\n`, { mode: 0o644 });
    try {
      await rename(temp, target);
    } catch (err) {
      // A concurrent start renamed its own complete copy first.
      if (existsSync(join(target, COMPLETE_MARKER))) return copied;
      throw new ServiceStartError('Postgres', `could not put the Postgres binaries in ${target}: ${(err as Error).message}`, `remove ${target} and run again`, {
        cause: err,
      });
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return copied;
}

/** npm may unpack the package without its library symlinks (install scripts off); pg-symlinks.json lists them. */
async function restoreSymlinks(dir: string): Promise<void> {
  const list = await readFile(join(dir, 'pg-symlinks.json'), 'utf8').catch(() => '[]');
  for (const { source, target } of JSON.parse(list) as Array<{ source: string; target: string }>) {
    const link = join(dir, relative('native', target));
    if (existsSync(link)) continue;
    await symlink(relative(dirname(target), source), link);
  }
}

/** Directories 0755, files readable by all, executables executable by all: the copy is root's, postgres only reads it. */
async function openUp(dir: string): Promise<void> {
  await chmod(dir, 0o755);
  for (const entry of await readdir(dir, { recursive: true })) {
    const path = join(dir, entry);
    const stat = await lstat(path);
    if (stat.isSymbolicLink()) continue;
    if (stat.isDirectory()) await chmod(path, 0o755);
    else await chmod(path, stat.mode & 0o100 ? 0o755 : 0o644);
  }
}
