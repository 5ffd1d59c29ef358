// The module map of AGENTS.md, checked: `npm run lint:deps` (part of `npm run lint`, so of `npm test`).
// Paths are the resolved files, so `@inferq/x` imports count as imports of packages/x (workspace symlinks are followed).
// Type-only imports count too (tsPreCompilationDeps).

/** Files that only tests run: they may reach further than the module they test. */
const TESTS = '(^e2e/|/tests/|\\.test\\.tsx?$|/testing/)';

const npm = (...names) => `^node_modules/(${names.join('|')})/`;
const ws = (...names) => `^packages/(${names.join('|')})/`;

/** `module` must not import any of `to` (resolved paths) from its sources; tests included unless `sourcesOnly`. */
const mustNotTouch = (name, comment, module, to, { sourcesOnly = false } = {}) => ({
  name,
  comment,
  severity: 'error',
  from: { path: `^${module}/`, ...(sourcesOnly ? { pathNot: TESTS } : {}) },
  to: { path: to },
});

/**
 * A package's rooms (its src/ folders), each allowed the rooms below it and no other: one rule per room. Files at the
 * package's src/ root (names, the index) are not rooms and stay open to all.
 */
const roomsMayUse = (src, pkg, rooms) =>
  Object.entries(rooms).map(([room, below]) => ({
    name: `${pkg}-room-${room}`,
    comment:
      `${src}/${room}/ imports only ${below.length > 0 ? below.map((r) => `${r}/`).join(', ') : 'no other room'} of ${src}: ` +
      "its rooms stand one floor on another (the package's README).",
    severity: 'error',
    from: { path: `^${src}/${room}/` },
    to: { path: `^${src}/[^/]+/`, pathNot: `^${src}/(${[room, ...below].join('|')})/` },
  }));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'No import cycles, type-only ones included: move the shared piece into a module both import.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-app-imports-app',
      comment:
        "An app never imports another app: share through a package. One exception: the bench's timed-device worker is " +
        "the worker's own process with its session opener swapped (a bench-only entry, never the worker's configuration).",
      severity: 'error',
      from: { path: '^apps/([^/]+)/', pathNot: '^apps/bench/src/timed-device/timed-worker\\.ts$' },
      to: { path: '^apps/', pathNot: '^apps/$1/' },
    },
    {
      name: 'no-package-imports-app',
      comment: 'Packages sit under the apps: a package never imports an app.',
      severity: 'error',
      from: { path: '^packages/' },
      to: { path: '^apps/' },
    },
    mustNotTouch(
      'api-not-inference',
      'apps/api never loads onnxruntime, not even through packages/inference (invariant 3).',
      'apps/api',
      `${ws('inference')}|${npm('onnxruntime-node', 'onnxruntime-common')}`,
    ),
    {
      name: 'web-only-contracts-and-sdk',
      comment: "apps/web imports no workspace but packages/contracts and the SDK's browser entry (not its node-only CLI).",
      severity: 'error',
      from: { path: '^apps/web/' },
      to: { path: '^(apps|packages)/', pathNot: '^(apps/web/|packages/contracts/src/|packages/sdk/src/(?!cli/))' },
    },
    {
      name: 'browser-code-no-node',
      comment: 'What the console bundles (apps/web, contracts, the SDK client) runs in browsers: no node: imports.',
      severity: 'error',
      from: { path: '^(apps/web/src/|packages/contracts/src/|packages/sdk/src/(?!cli/))', pathNot: TESTS },
      to: { dependencyTypes: ['core'] },
    },
    mustNotTouch(
      'contracts-no-io',
      'packages/contracts is shapes and pure functions: no node: modules, no other workspace, no I/O client.',
      'packages/contracts',
      `^(apps/|packages/(?!contracts/))|${npm('pg', 'bullmq', 'ioredis', '@aws-sdk/[^/]+', 'fastify', 'undici')}`,
    ),
    mustNotTouch(
      'core-no-clients',
      'packages/core has no database, queue or storage client (the OTLP exporter is its one network client).',
      'packages/core',
      `${ws('db', 'queue', 'storage', 'inference')}|${npm('pg', 'bullmq', 'ioredis', '@aws-sdk/[^/]+')}`,
    ),
    mustNotTouch(
      'db-only-sql',
      'packages/db does SQL only: no queue, S3 or HTTP.',
      'packages/db',
      `${ws('queue', 'storage', 'inference')}|${npm('bullmq', 'ioredis', '@aws-sdk/[^/]+', 'fastify', 'undici')}`,
    ),
    mustNotTouch(
      'queue-no-postgres-no-onnxruntime',
      'packages/queue knows neither Postgres nor onnxruntime.',
      'packages/queue',
      `${ws('db', 'inference')}|${npm('pg', 'onnxruntime-node', 'onnxruntime-common')}`,
    ),
    ...roomsMayUse('packages/db/src', 'db', {
      connection: [],
      sql: ['connection'],
      retention: ['connection', 'sql'],
      jobs: ['connection', 'sql', 'retention'],
      runs: ['connection', 'sql', 'retention'],
      models: ['connection', 'sql', 'retention'],
      keys: ['connection', 'sql', 'retention'],
      'batch-api': ['connection', 'sql', 'retention'],
    }),
    ...roomsMayUse('packages/queue/src', 'queue', {
      connection: [],
      producer: ['connection'],
      fleet: ['connection'],
      // A group entry is the producer's format, and a group's requeued members go back through the producer.
      consumer: ['connection', 'producer'],
    }),
    mustNotTouch(
      'storage-only-s3',
      'packages/storage is the S3 client: no Postgres, queue or HTTP server.',
      'packages/storage',
      `${ws('db', 'queue')}|${npm('pg', 'bullmq', 'ioredis', 'fastify')}`,
    ),
    mustNotTouch(
      'inference-no-http-postgres-bullmq',
      'packages/inference runs models: no HTTP, Postgres or BullMQ.',
      'packages/inference',
      `${ws('db', 'queue', 'storage')}|${npm('pg', 'bullmq', 'ioredis', 'fastify', 'undici')}`,
    ),
    mustNotTouch(
      'onnx-model-no-onnxruntime',
      'packages/onnx-model parses and writes ONNX files without onnxruntime (its tests may run the models in it).',
      'packages/onnx-model',
      `${ws('inference')}|${npm('onnxruntime-node', 'onnxruntime-common')}`,
      { sourcesOnly: true },
    ),
    {
      name: 'bullmq-only-in-queue',
      comment:
        "Only packages/queue imports bullmq, so BullMQ stays behind the queue seam: apps hold inferq's own types (QueueConsumer, QueueJob, " +
        'NonRetryableError). One exception: the bench ceilings (apps/bench/src/ceilings/), which measure bare BullMQ as the floor inferq is compared with.',
      severity: 'error',
      from: { pathNot: '^(packages/queue/|apps/bench/src/ceilings/)' },
      to: { path: npm('bullmq') },
    },
    mustNotTouch(
      'api-no-redis-client',
      'apps/api reaches Redis only through packages/queue (the topology seam): no bullmq or ioredis of its own.',
      'apps/api',
      npm('bullmq', 'ioredis'),
    ),
    mustNotTouch(
      'api-routes-through-services',
      "apps/api's routes translate HTTP and call services: they reach packages/db and packages/queue only through " +
        'apps/api/src/services/, types included (a service re-exports the record types its routes show).',
      'apps/api/src/routes',
      ws('db', 'queue'),
      { sourcesOnly: true },
    ),
    mustNotTouch(
      'api-services-below-the-edge',
      "apps/api's services sit under everything that faces a client or a timer: they import no route, " +
        'plugin, webhook dispatcher or sender, background sweeper, Batch API file (batch-api/ runs its lines through ' +
        'the jobs and embeddings services), metric, nor app.ts or main.ts (which wire them). metrics/ is not a lower layer: ' +
        'api-metrics.ts reads the queue overview through the stats service, and services count into metrics only through ' +
        'the callbacks app.ts hands them (onCacheLookup, onEvent, onPurged).',
      'apps/api/src/services',
      '^apps/api/src/((routes|plugins|webhooks|background|batch-api|metrics)/|(app|main)\\.ts$)',
      { sourcesOnly: true },
    ),
    mustNotTouch(
      'worker-no-redis-client',
      'apps/worker reaches Redis only through packages/queue (the topology seam): no bullmq or ioredis of its own.',
      'apps/worker',
      npm('bullmq', 'ioredis'),
    ),
    {
      name: 'worker-batch-writes-through-the-store',
      comment:
        "Every Postgres write of a batch goes through apps/worker/src/pipeline/batch-store.ts, which fences each to the batch's claim; " +
        "the pipeline's other files reach packages/db through it. job-errors.ts reads only what kind an error is (isDatabaseUnavailable).",
      severity: 'error',
      from: { path: '^apps/worker/src/pipeline/', pathNot: `^apps/worker/src/pipeline/(batch-store|job-errors)\\.ts$|${TESTS}` },
      to: { path: ws('db') },
    },
    mustNotTouch('worker-no-http-routes', 'apps/worker serves no HTTP routes (its metrics endpoint is plain node:http).', 'apps/worker', npm('fastify')),
    {
      name: 'no-non-package-json',
      comment: 'Every npm package imported is declared in the package.json of its workspace or of the root (knip checks each workspace on its own).',
      severity: 'error',
      from: {},
      to: { dependencyTypes: ['npm-no-pkg', 'npm-unknown'] },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(dist|apps/web/dist|\\.inferq|coverage|test-results)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    combinedDependencies: true,
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      extensions: ['.ts', '.tsx', '.d.ts', '.js', '.mjs', '.cjs', '.json'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};
