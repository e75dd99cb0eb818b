import type { ControlPlaneConfig } from '../config/env.ts';
import { migrateToLatest, openPGlite, openPostgres, type DatabaseHandle } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { API_VERSIONS } from '../services/api-versions.ts';
import { createServices, loadSigningSecret, openObjectStore, type AppContext } from './app-context.ts';

export async function openDatabase(config: ControlPlaneConfig): Promise<DatabaseHandle> {
  return config.env.DATABASE_URL
    ? openPostgres(config.env.DATABASE_URL, config.env.DATABASE_POOL_SIZE)
    : openPGlite(config.dataDir);
}

/** Opens the database (migrating it), the object store and the services: everything a process shares. */
export async function openAppContext(
  config: ControlPlaneConfig,
  logger: Logger,
  options: { database?: DatabaseHandle } = {},
): Promise<AppContext & { close(): Promise<void> }> {
  const database = options.database ?? (await openDatabase(config));
  const closeDatabase = options.database ? async () => {} : () => database.close();
  try {
    const migration = await migrateToLatest(database.db);
    for (const result of migration.results ?? []) logger.info({ migration: result.migrationName }, 'applied migration');
    const signingSecret = await loadSigningSecret(config);
    const objectStore = await openObjectStore(config, signingSecret);
    return {
      config,
      logger,
      database,
      objectStore,
      signingSecret,
      apiVersions: API_VERSIONS,
      services: createServices(database, objectStore),
      close: closeDatabase,
    };
  } catch (error) {
    await closeDatabase();
    throw error;
  }
}
