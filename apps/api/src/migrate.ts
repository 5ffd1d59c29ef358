import { Type } from '@sinclair/typebox';
import { createLogger, dbConfig, loadConfig, logConfig } from '@inferq/core';
import { createPool, MIGRATIONS_DIR, runMigrations } from '@inferq/db';

// The deploy's migration step (compose `migrate`, the Kubernetes Job): applies
// pending SQL migrations and exits. Safe to run on every deploy and from
// several places at once (an advisory lock serialises them).
const config = loadConfig({
  ...dbConfig,
  ...logConfig,
  /** Where the SQL migrations are (the image copies prisma/migrations there). */
  MIGRATIONS_DIR: Type.String({ default: MIGRATIONS_DIR }),
});
const logger = createLogger({ service: 'inferq-migrate', level: config.LOG_LEVEL });
const pool = createPool({ url: config.DATABASE_URL, schema: config.DATABASE_SCHEMA, max: 1, applicationName: 'inferq-migrate' });
try {
  const applied = await runMigrations(pool, config.MIGRATIONS_DIR);
  logger.info({ applied, schema: config.DATABASE_SCHEMA }, applied.length > 0 ? 'migrations applied' : 'schema up to date');
} catch (err) {
  logger.error({ err }, 'migration failed');
  process.exitCode = 1;
} finally {
  await pool.end();
}
