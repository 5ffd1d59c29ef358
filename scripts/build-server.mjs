// Bundles the API and worker entry points into dist/ for the container
// images: our TypeScript (every @inferq/* workspace) is compiled into one
// file per entry point, npm packages stay external and are installed beside
// it, so the images run plain `node` with no TypeScript loader.
// Usage: node scripts/build-server.mjs [api|worker ...] (default: both)
import { build } from 'esbuild';
import { cp, rm, writeFile } from 'node:fs/promises';

const APPS = {
  api: ['apps/api/src/main.ts', 'apps/api/src/migrate.ts'],
  // The session and feeder threads are entries of their own: model-session.ts and feeder-threads.ts start them from the file beside the bundle.
  worker: ['apps/worker/src/launcher.ts', 'apps/worker/src/main.ts', 'packages/inference/src/session-thread.ts', 'apps/worker/src/feeders/feeder-thread.ts'],
};

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
for (const app of targets.length > 0 ? targets : Object.keys(APPS)) {
  if (!APPS[app]) throw new Error(`unknown app ${app}; one of ${Object.keys(APPS).join(', ')}`);
  const result = await build({
    entryPoints: APPS[app],
    outdir: `dist/${app}`,
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
    await rm(`dist/${app}/${to}`, { recursive: true, force: true });
    await cp(from, `dist/${app}/${to}`, { recursive: true });
  }
  // The bundles are ES modules; an image has no package.json of ours above them to say so.
  await writeFile(`dist/${app}/package.json`, '{ "type": "module" }\n');
  await writeFile(`dist/${app}/external-imports.json`, `${JSON.stringify(external, null, 2)}\n`);
  console.log(`dist/${app}: ${APPS[app].length} entry points, ${external.length} external imports`);
}
