import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';

export type EmbeddedTemporal = { address: string; uiUrl: string; stop(): Promise<void> };

/**
 * Starts the Temporal dev server as a child process, persisting to DATA_DIR/temporal.db so in-flight
 * workflows survive a restart. The binary is TEMPORAL_CLI_PATH, else `temporal` on PATH, else the
 * SDK's cached download.
 */
export async function startEmbeddedTemporal(config: ControlPlaneConfig, logger: Logger): Promise<EmbeddedTemporal> {
  const { env } = config;
  const binary = env.TEMPORAL_CLI_PATH ?? (await findOnPath('temporal'));
  logger.info({ binary: binary ?? 'SDK cached download' }, 'starting the Temporal dev server');
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: binary ? { type: 'existing-path', path: binary } : { type: 'cached-download' },
      dbFilename: join(config.dataDir, 'temporal.db'),
      namespace: env.TEMPORAL_NAMESPACE,
      ip: '127.0.0.1',
      port: env.TEMPORAL_DEV_PORT,
      ui: true,
      uiPort: env.TEMPORAL_DEV_UI_PORT,
      log: { format: 'json', level: 'error' },
    },
  });
  return {
    address: `127.0.0.1:${env.TEMPORAL_DEV_PORT}`,
    uiUrl: `http://localhost:${env.TEMPORAL_DEV_UI_PORT}`,
    stop: () => environment.teardown(),
  };
}

async function findOnPath(command: string): Promise<string | undefined> {
  for (const directory of (process.env.PATH ?? '').split(delimiter)) {
    if (!directory) continue;
    const candidate = join(directory, command);
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this directory
    }
  }
  return undefined;
}
