// Bundles the API and worker entry points into dist/ for the container
// images: our TypeScript (every @inferq/* workspace) is compiled into one
// file per entry point, npm packages stay external and are installed beside
// it, so the images run plain `node` with no TypeScript loader.
// Usage: node scripts/build-server.mjs [api|worker|bench-worker ...] (default: api and worker)
import { build } from 'esbuild';
import { cp, rm, writeFile } from 'node:fs/promises';

// The session and feeder threads are entries of their own: model-session.ts and feeder-threads.ts start them from the
// file beside the bundle.
const WORKER = [
  'apps/worker/src/launcher.ts',
  'apps/worker/src/main.ts',
  'packages/inference/src/session-thread.ts',
  'apps/worker/src/feeders/feeder-thread.ts',
];
/** Each target's entry points and where its bundle goes. */
const APPS = {
  api: { entries: ['apps/api/src/main.ts', 'apps/api/src/migrate.ts'], outdir: 'dist/api' },
  worker: { entries: WORKER, outdir: 'dist/worker' },
  // The worker as `npm run bench` starts it: the image's bundle with the bench's timed device beside it, so the bench
  // times the code the images run. Apart from dist/, which the image test builds meanwhile. Not a default target.
  'bench-worker': {
    entries: [...WORKER, 'apps/bench/src/timed-device/timed-worker.ts', 'apps/bench/src/timed-device/timed-session-thread.ts'],
    outdir: '.inferq/bench-dist/worker',
  },
};
const DEFAULT_TARGETS = ['api', 'worker'];

/**
 * Files our modules read at run time from beside themselves (`new URL('./…', import.meta.url)`), copied to the same
 * place beside the bundle: the queue's Lua scripts (packages/queue/src/lua-script.ts).
 */
const ASSETS = { 'packages/queue/src/lua': 'lua' };

/** Every bare import but our workspaces' is left to node_modules. */
const externalPackages = {
  name: 'external-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@inferq/') ? undefined : { path: args.path, external: true }));
  },
};

const targets = process.argv.slice(2);
for (const app of targets.length > 0 ? targets : DEFAULT_TARGETS) {
  if (!APPS[app]) throw new Error(`unknown app ${app}; one of ${Object.keys(APPS).join(', ')}`);
  const { entries, outdir } = APPS[app];
  const result = await build({
    entryPoints: entries,
    outdir,
    entryNames: '[name]',
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    sourcemap: 'linked',
    metafile: true,
    plugins: [externalPackages],
    logLevel: 'warning',
  });
  // Which npm packages the bundle loads: tests check the API's never include onnxruntime (invariant 3).
  const external = [...new Set(Object.values(result.metafile.inputs).flatMap((i) => i.imports.filter((m) => m.external).map((m) => m.path)))].sort();
  for (const [from, to] of Object.entries(ASSETS)) {
    await rm(`${outdir}/${to}`, { recursive: true, force: true });
    await cp(from, `${outdir}/${to}`, { recursive: true });
  }
  // The bundles are ES modules; an image has no package.json of ours above them to say so.
  await writeFile(`${outdir}/package.json`, '{ "type": "module" }\n');
  await writeFile(`${outdir}/external-imports.json`, `${JSON.stringify(external, null, 2)}\n`);
  console.log(`${outdir}: ${entries.length} entry points, ${external.length} external imports`);
}
