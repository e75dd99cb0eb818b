import { access, constants, readFile } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { TestWorkflowEnvironment } from '@temporalio/testing';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { Logger } from '../logging/logger.ts';

export type TemporalTarget = {
  address: string;
  namespace: string;
  apiKey?: string;
  tls?: boolean | { clientCertPair?: { crt: Buffer; key: Buffer } };
};

export async function temporalTargetFromConfig(config: ControlPlaneConfig, address: string): Promise<TemporalTarget> {
  const { env } = config;
  const target: TemporalTarget = { address, namespace: env.TEMPORAL_NAMESPACE };
  if (env.TEMPORAL_API_KEY) target.apiKey = env.TEMPORAL_API_KEY;
  if (env.TEMPORAL_TLS_CERT_PATH && env.TEMPORAL_TLS_KEY_PATH) {
    const [crt, key] = await Promise.all([readFile(env.TEMPORAL_TLS_CERT_PATH), readFile(env.TEMPORAL_TLS_KEY_PATH)]);
    target.tls = { clientCertPair: { crt, key } };
  } else if (env.TEMPORAL_TLS || env.TEMPORAL_API_KEY) {
    target.tls = true; // Temporal Cloud API keys are only accepted over TLS.
  }
  return target;
}

export async function connectClient(target: TemporalTarget): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect({
    address: target.address,
    ...(target.tls !== undefined ? { tls: target.tls } : {}),
    ...(target.apiKey ? { apiKey: target.apiKey } : {}),
  });
  return { client: new Client({ connection, namespace: target.namespace }), close: () => connection.close() };
}

export function connectWorkerConnection(target: TemporalTarget): Promise<NativeConnection> {
  return NativeConnection.connect({
    address: target.address,
    ...(target.tls !== undefined ? { tls: target.tls } : {}),
    ...(target.apiKey ? { apiKey: target.apiKey } : {}),
  });
}

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
