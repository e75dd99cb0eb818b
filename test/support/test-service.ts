import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadControlPlaneConfig } from '../../control-plane/src/config/env.ts';
import { createLogger } from '../../control-plane/src/logging/logger.ts';
import { startApiServer } from '../../control-plane/src/runtime/api-server.ts';
import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';
import { openAppContext } from '../../control-plane/src/runtime/bootstrap.ts';
import { createPostgresTestDatabase, type TestDatabase } from './database.ts';
import { freePort } from './processes.ts';

export type TestService = {
  context: AppContext;
  database: TestDatabase;
  baseUrl: string;
  stop(): Promise<void>;
};

/**
 * The real API on a free port, backed by a fresh Postgres database and a local object store in a
 * temporary DATA_DIR. Extra environment variables override the defaults.
 */
export async function startTestService(env: Record<string, string> = {}, overrides: Partial<AppContext> = {}): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'petsing-service-'));
  const database = await createPostgresTestDatabase();
  const port = await freePort();
  const config = loadControlPlaneConfig({
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: database.url,
    LOG_LEVEL: 'silent',
    ...env,
  });
  const context: AppContext = {
    ...(await openAppContext(config, createLogger(config.env.LOG_LEVEL), { database })),
    ...overrides,
  };
  const api = await startApiServer(context, port);
  return {
    context,
    database,
    baseUrl: config.baseUrl,
    stop: async () => {
      await api.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
