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

/** How often a Temporal server that does not answer yet is tried again. */
const WAIT_POLL_MS = 200;
/** How often a wait without a deadline says that it still waits. */
const STILL_WAITING_EVERY_MS = 30_000;

export type TemporalWait = {
  /** Give up after this long; without it, wait until Temporal answers (or `signal` aborts). */
  timeoutMs?: number;
  /** Ends the wait early with its reason (a dev server that exited). */
  giveUp?: () => string | undefined;
  signal?: AbortSignal;
  /** Told every 30 s that Temporal still does not answer (a log line), with how long the wait has lasted. */
  stillWaiting?: (waitedSeconds: number, address: string) => void;
};

/**
 * Whether the Temporal server at TEMPORAL_ADDRESS answers for TEMPORAL_NAMESPACE now (the port opens a moment before
 * the namespace is registered); one try, within `connectTimeoutMs`.
 */
export async function temporalAnswers(env: SharedEnv, connectTimeoutMs = 1_000, settings?: ConnectionSettings): Promise<boolean> {
  const connection = await Connection.connect({ ...(settings ?? (await connectionSettings(env))), connectTimeout: connectTimeoutMs }).catch(() => undefined);
  if (!connection) return false;
  try {
    await connection.workflowService.describeNamespace({ namespace: env.TEMPORAL_NAMESPACE });
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

/**
 * Resolves once the Temporal server at TEMPORAL_ADDRESS answers for TEMPORAL_NAMESPACE (temporalAnswers), trying
 * again meanwhile: a worker started beside its server (under `petsing start`, which starts its dev server meanwhile
 * and starts it again when it dies; a pod before the frontend) waits for it rather than exit and be started again.
 */
export async function waitForTemporal(env: SharedEnv, wait: TemporalWait = {}): Promise<void> {
  const settings = await connectionSettings(env);
  const started = Date.now();
  let toldAt = started;
  for (;;) {
    wait.signal?.throwIfAborted();
    const reason = wait.giveUp?.();
    if (reason) throw new Error(reason);
    if (await temporalAnswers(env, 1_000, settings)) return;
    const now = Date.now();
    if (wait.timeoutMs !== undefined && now - started > wait.timeoutMs) {
      throw new Error(`Temporal at ${settings.address} did not answer for namespace ${env.TEMPORAL_NAMESPACE} within ${wait.timeoutMs / 1000} s`);
    }
    if (now - toldAt >= STILL_WAITING_EVERY_MS) {
      toldAt = now;
      wait.stillWaiting?.(Math.round((now - started) / 1000), settings.address);
    }
    await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
  }
}
