import { Type } from '@sinclair/typebox';
import { createLogger, dbConfig, loadConfig, logConfig } from '@inferq/core';
import { createPool, MIGRATIONS_DIR, runMigrations } from '@inferq/db';

// The deploy's migration step (compose `migrate`, the Kubernetes Job): applies
// pending SQL migrations and exits. Safe to run on every deploy and from
// several places at once (an advisory lock serialises them). MIGRATE_UP_TO
// stops after the named one (docs/deploy.md: upgrades that need two steps).
const config = loadConfig({
  ...dbConfig,
  ...logConfig,
  /** Where the SQL migrations are (the image copies prisma/migrations there). */
  MIGRATIONS_DIR: Type.String({ default: MIGRATIONS_DIR }),
  /** Apply the migrations only up to this one (a folder name, e.g. 0017_validate_legacy_bound): the first step of a two-step upgrade. */
  MIGRATE_UP_TO: Type.Optional(Type.String({ pattern: '^[0-9]{4}_[a-z0-9_]+$' })),
});
const logger = createLogger({ service: 'inferq-migrate', level: config.LOG_LEVEL });
const pool = createPool({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, max: 1, applicationName: 'inferq-migrate' });
try {
  const applied = await runMigrations(pool, config.MIGRATIONS_DIR, { upTo: config.MIGRATE_UP_TO });
  logger.info({ applied, schema: config.DATABASE_SCHEMA }, applied.length > 0 ? 'migrations applied' : 'schema up to date');
} catch (err) {
  logger.error({ err }, 'migration failed');
  process.exitCode = 1;
} finally {
  await pool.end();
}
