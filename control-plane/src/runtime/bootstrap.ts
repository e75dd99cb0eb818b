import type { ControlPlaneConfig } from '../config/env.ts';
import { migrateToLatest, openPGlite, openPostgres, type DatabaseHandle } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { API_VERSIONS, type ApiVersionEntry } from '../services/api-versions.ts';
import { createObjectStore } from '@petsing/platform/storage';
import type { Client } from '@temporalio/client';
import type { UserUrlFetcher } from '../media/safe-fetch.ts';
import type { VideoPageResolver } from '../media/social/video-page-resolver.ts';
import { connectTemporalClient, loadSigningSecret, objectStoreConfig } from '@petsing/platform/runtime';
import { createServices, type AppContext } from './app-context.ts';
import { loadDevIdentityKeys } from '../services/dev-identity.ts';
import type { Metrics } from '../services/ports/metrics.ts';

async function openDatabase(config: ControlPlaneConfig): Promise<DatabaseHandle> {
  return config.env.DATABASE_URL
    ? openPostgres(config.env.DATABASE_URL, config.env.DATABASE_POOL_SIZE)
    : openPGlite(config.dataDir);
}

/** Opens the database (migrating it), the object store and the services: everything a process shares. */
export async function openAppContext(
  config: ControlPlaneConfig,
  logger: Logger,
  options: { database?: DatabaseHandle; temporalClient?: Client; userUrlFetcher?: UserUrlFetcher; videoPageResolver?: VideoPageResolver; apiVersions?: readonly ApiVersionEntry[]; metrics?: Metrics } = {},
): Promise<AppContext & { close(): Promise<void> }> {
  const database = options.database ?? (await openDatabase(config));
  const closeDatabase = options.database ? async () => {} : () => database.close();
  try {
    const migration = await migrateToLatest(database.db);
    for (const result of migration.results ?? []) logger.info({ migration: result.migrationName }, 'applied migration');
    const signingSecret = await loadSigningSecret(config.env);
    const objectStore = createObjectStore(objectStoreConfig(config.env, signingSecret));
    const temporal = options.temporalClient ? undefined : lazyTemporalClient(config);
    const services = createServices({
      config,
      database,
      objectStore,
      logger,
      signingSecret,
      ...(config.externalIdentityProvider ? {} : { devIdentityKeys: await loadDevIdentityKeys(config.dataDir) }),
      ...(options.userUrlFetcher ? { userUrlFetcher: options.userUrlFetcher } : {}),
      ...(options.videoPageResolver ? { videoPageResolver: options.videoPageResolver } : {}),
      ...(options.metrics ? { metrics: options.metrics } : {}),
      temporalClient: options.temporalClient ? async () => options.temporalClient! : temporal!.client,
    });
    return {
      config,
      logger,
      database,
      objectStore,
      apiVersions: options.apiVersions ?? API_VERSIONS,
      services,
      close: async () => {
        await services.rateLimiter.close();
        await temporal?.close();
        await closeDatabase();
      },
    };
  } catch (error) {
    await closeDatabase();
    throw error;
  }
}

/** Connects to Temporal on first use, so the API starts (and answers reads) while Temporal is still coming up. */
function lazyTemporalClient(config: ControlPlaneConfig) {
  let connecting: ReturnType<typeof connectTemporalClient> | undefined;
  return {
    client: async () => {
      connecting ??= connectTemporalClient(config.env).catch((error: unknown) => {
        connecting = undefined;
        throw error;
      });
      return (await connecting).client;
    },
    close: async () => {
      if (connecting) await (await connecting.catch(() => undefined))?.close();
    },
  };
}
