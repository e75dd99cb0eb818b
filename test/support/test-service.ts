import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRenderWorkerEnv, startRenderWorker } from '@petsing/render-node';
import { installTemporalRuntime } from '@petsing/platform/runtime';
import { loadControlPlaneConfig } from '../../control-plane/src/config/env.ts';
import { createLogger, messageFirstLogger, type Logger } from '../../control-plane/src/logging/logger.ts';
import type { ApiVersionEntry } from '../../control-plane/src/services/api-versions.ts';
import { startApiServer } from '../../control-plane/src/runtime/api-server.ts';
import type { AppContext } from '../../control-plane/src/runtime/app-context.ts';
import { openAppContext } from '../../control-plane/src/runtime/bootstrap.ts';
import { startControlWorker } from '../../control-plane/src/temporal/control-worker.ts';
import type { UserUrlFetcher } from '../../control-plane/src/media/safe-fetch.ts';
import type { VideoPageResolver } from '../../control-plane/src/media/social/video-page-resolver.ts';
import { createPostgresTestDatabase, type TestDatabase } from './database.ts';
import { freePort } from './processes.ts';
import { createTestNamespace } from './temporal.ts';

export type TestService = {
  context: AppContext;
  database: TestDatabase;
  baseUrl: string;
  env: Record<string, string>;
  /** Starts one more render node (for tests that kill one). */
  startRenderWorker(): Promise<{ stop(): Promise<void> }>;
  stop(): Promise<void>;
};

export type TestServiceOptions = {
  env?: Record<string, string>;
  /** The logger every service, route and worker of the test service writes to (given before any is built). */
  logger?: Logger;
  apiVersions?: readonly ApiVersionEntry[];
  /** Connect to the shared Temporal dev server, in a namespace of this test file's own. */
  temporal?: boolean;
  controlWorker?: boolean;
  renderWorker?: boolean;
  userUrlFetcher?: UserUrlFetcher;
  videoPageResolver?: VideoPageResolver;
};

/**
 * The real API on a free port, backed by a fresh Postgres database and a local object store in a
 * temporary DATA_DIR; optionally with Temporal and real workers.
 */
export async function startTestService(options: TestServiceOptions = {}): Promise<TestService> {
  const dataDir = await mkdtemp(join(tmpdir(), 'petsing-service-'));
  const database = await createPostgresTestDatabase();
  const port = await freePort();
  const env: Record<string, string> = {
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    DATABASE_URL: database.url!,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    // The run's workflow bundle (test/global-setup.ts), as a production image ships one.
    ...(process.env.WORKFLOW_BUNDLE_PATH ? { WORKFLOW_BUNDLE_PATH: process.env.WORKFLOW_BUNDLE_PATH } : {}),
    ...(options.temporal ? await temporalEnv() : {}),
    ...options.env,
  };
  const config = loadControlPlaneConfig(env);
  const logger = options.logger ?? createLogger(config.env.LOG_LEVEL);
  installTemporalRuntime(logger);
  const context = await openAppContext(config, logger, {
    database,
    ...(options.apiVersions ? { apiVersions: options.apiVersions } : {}),
    ...(options.userUrlFetcher ? { userUrlFetcher: options.userUrlFetcher } : {}),
    ...(options.videoPageResolver ? { videoPageResolver: options.videoPageResolver } : {}),
  });
  const stops: (() => Promise<void>)[] = [];
  const startRender = async () => {
    const worker = await startRenderWorker(loadRenderWorkerEnv(env), messageFirstLogger(logger));
    stops.push(worker.stop);
    return worker;
  };
  if (options.controlWorker) stops.push((await startControlWorker(context)).stop);
  if (options.renderWorker) await startRender();
  const api = await startApiServer(context, port);
  return {
    context,
    database,
    baseUrl: config.baseUrl,
    env,
    startRenderWorker: startRender,
    stop: async () => {
      await api.close();
      for (const stop of stops.reverse()) await stop().catch(() => {});
      await context.close();
      await database.drop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function temporalEnv(): Promise<Record<string, string>> {
  const { address, namespace } = await createTestNamespace();
  return { TEMPORAL_ADDRESS: address, TEMPORAL_NAMESPACE: namespace };
}
