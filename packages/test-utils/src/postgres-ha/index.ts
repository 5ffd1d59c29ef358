export { postgresHaAvailable, startPostgresHa, type PostgresHa, type PostgresHaNode, type PostgresHaOptions } from './postgres-ha.ts';
