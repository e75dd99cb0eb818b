import { readFile } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { temporalClientInterceptors } from '../tracing/index.ts';
import { temporalAddress, type SharedEnv } from './config.ts';

type ConnectionSettings = {
  address: string;
  tls?: boolean | { clientCertPair: { crt: Buffer; key: Buffer } };
  apiKey?: string;
};

async function connectionSettings(env: SharedEnv): Promise<ConnectionSettings> {
  const settings: ConnectionSettings = { address: temporalAddress(env) };
  if (env.TEMPORAL_API_KEY) settings.apiKey = env.TEMPORAL_API_KEY;
  if (env.TEMPORAL_TLS_CERT_PATH && env.TEMPORAL_TLS_KEY_PATH) {
    const [crt, key] = await Promise.all([readFile(env.TEMPORAL_TLS_CERT_PATH), readFile(env.TEMPORAL_TLS_KEY_PATH)]);
    settings.tls = { clientCertPair: { crt, key } };
  } else if (env.TEMPORAL_TLS || env.TEMPORAL_API_KEY) {
    settings.tls = true; // Temporal Cloud accepts API keys over TLS only.
  }
  return settings;
}

/** A Temporal client; in a process that traces, the workflows it starts and signals it sends carry the active trace. */
export async function connectTemporalClient(env: SharedEnv): Promise<{ client: Client; close(): Promise<void> }> {
  const connection = await Connection.connect(await connectionSettings(env));
  const workflow = await temporalClientInterceptors();
  const client = new Client({ connection, namespace: env.TEMPORAL_NAMESPACE, ...(workflow.length > 0 ? { interceptors: { workflow } } : {}) });
  return { client, close: () => connection.close() };
}

export async function connectTemporalWorker(env: SharedEnv): Promise<NativeConnection> {
  return NativeConnection.connect(await connectionSettings(env));
}
