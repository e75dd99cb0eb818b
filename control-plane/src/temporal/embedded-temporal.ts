import { access, constants } from 'node:fs/promises';
import { createServer } from 'node:net';
import { delimiter, join } from 'node:path';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import { ConfigError } from '@petsing/platform/runtime';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';

export type EmbeddedTemporal = { address: string; uiUrl: string; stop(): Promise<void> };

/** The embedded dev server listens on loopback only. */
const DEV_SERVER_HOST = '127.0.0.1';

/**
 * Starts the Temporal dev server as a child process, persisting to DATA_DIR/temporal.db so in-flight
 * workflows survive a restart. The binary is TEMPORAL_CLI_PATH, else `temporal` on PATH, else the
 * SDK's cached download. Refuses to start when its ports are taken (see assertDevServerPortsFree).
 */
export async function startEmbeddedTemporal(config: ControlPlaneConfig, logger: Logger): Promise<EmbeddedTemporal> {
  const { env } = config;
  await assertDevServerPortsFree(config);
  const binary = env.TEMPORAL_CLI_PATH ?? (await findOnPath('temporal'));
  logger.info({ binary: binary ?? 'SDK cached download' }, 'starting the Temporal dev server');
  const environment = await TestWorkflowEnvironment.createLocal({
    server: {
      executable: binary ? { type: 'existing-path', path: binary } : { type: 'cached-download' },
      dbFilename: join(config.dataDir, 'temporal.db'),
      namespace: env.TEMPORAL_NAMESPACE,
      ip: DEV_SERVER_HOST,
      port: env.TEMPORAL_DEV_PORT,
      ui: true,
      uiPort: env.TEMPORAL_DEV_UI_PORT,
      log: { format: 'json', level: 'error' },
    },
  });
  return {
    address: `${DEV_SERVER_HOST}:${env.TEMPORAL_DEV_PORT}`,
    uiUrl: `http://localhost:${env.TEMPORAL_DEV_UI_PORT}`,
    stop: () => environment.teardown(),
  };
}

/**
 * Throws a ConfigError naming the port and its setting when something already listens on the dev server's
 * gRPC or UI port. The dev server would fail to bind and exit, while the SDK, finding the port answering,
 * would attach the workers to whatever server is there (another petsing's, another project's).
 */
export async function assertDevServerPortsFree(config: ControlPlaneConfig): Promise<void> {
  const { env } = config;
  const problems: string[] = [];
  if (!(await portIsFree(DEV_SERVER_HOST, env.TEMPORAL_DEV_PORT))) {
    problems.push(
      `TEMPORAL_DEV_PORT: port ${env.TEMPORAL_DEV_PORT} on ${DEV_SERVER_HOST} is already in use, so the embedded Temporal dev server cannot start. ` +
        `Stop what listens there, set TEMPORAL_DEV_PORT to a free port, or set TEMPORAL_ADDRESS=${DEV_SERVER_HOST}:${env.TEMPORAL_DEV_PORT} to use the Temporal server there.`,
    );
  }
  if (!(await portIsFree(DEV_SERVER_HOST, env.TEMPORAL_DEV_UI_PORT))) {
    problems.push(
      `TEMPORAL_DEV_UI_PORT: port ${env.TEMPORAL_DEV_UI_PORT} on ${DEV_SERVER_HOST} is already in use, so the embedded Temporal dev server cannot start. ` +
        'Stop what listens there or set TEMPORAL_DEV_UI_PORT to a free port.',
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
}

/** Whether a listening socket can be bound to host:port right now. */
function portIsFree(host: string, port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    probe.listen({ host, port, exclusive: true }, () => probe.close(() => resolve(true)));
  });
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
