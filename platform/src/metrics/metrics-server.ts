import { createServer } from 'node:http';
import { ConfigError, socketAddress, TEMPORAL_METRICS_PORT_OFFSET } from '../runtime/config.ts';
import { portIsFree } from '../runtime/ports.ts';
import { createMetricsRegistry, type MetricsRegistry } from './registry.ts';

export type MetricsServer = { port: number; close(): Promise<void> };

/**
 * Serves `GET /metrics` (the Prometheus text format) on a listener of its own, apart from any public port; every
 * other request answers 404. A taken port is a configuration error naming `setting`, as the dev server's ports are.
 */
export async function startMetricsServer(registry: MetricsRegistry, { host, port, setting }: { host: string; port: number; setting: string }): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: metrics are served at GET /metrics.\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      (error: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`Collecting the metrics failed: ${String(error)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(error.code === 'EADDRINUSE' ? portTaken(setting, host, port) : error));
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  const address = server.address();
  return {
    port: typeof address === 'object' && address ? address.port : port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Throws the same configuration error when host:port cannot be bound now (for a listener someone else opens: the Temporal SDK's). */
async function assertPortFree(host: string, port: number, setting: string, what: string): Promise<void> {
  if (!(await portIsFree(host, port))) throw portTaken(setting, host, port, what);
}

const portTaken = (setting: string, host: string, port: number, what = 'the metrics endpoint') =>
  new ConfigError([`${setting}: port ${port} on ${host} is already in use, so ${what} cannot listen there. Set ${setting} to a free port, or to 0 to turn the metrics endpoints off.`]);

/** A process's metrics: its registry, served on its port, and where its Temporal SDK runtime serves its own. */
export type ProcessMetrics = {
  registry: MetricsRegistry;
  /** `host:port` for installTemporalRuntime: the metrics port + 100, for a process that runs Temporal workers. */
  temporalBindAddress: string | undefined;
  close(): Promise<void>;
};

/**
 * Opens a process's metrics endpoint on `port` (GET /metrics of a fresh registry with the default process metrics)
 * and, when it runs Temporal workers, checks that the Temporal SDK's port (`port` + 100) is free for it. Port 0:
 * no metrics (undefined). A taken port is a ConfigError naming `setting`.
 */
export async function startProcessMetrics({ host, port, setting, temporalWorkers }: { host: string; port: number; setting: string; temporalWorkers: boolean }): Promise<ProcessMetrics | undefined> {
  if (port === 0) return undefined;
  const temporalPort = port + TEMPORAL_METRICS_PORT_OFFSET;
  if (temporalWorkers) await assertPortFree(host, temporalPort, setting, `the Temporal SDK's metrics (${setting} + ${TEMPORAL_METRICS_PORT_OFFSET})`);
  const registry = createMetricsRegistry();
  const server = await startMetricsServer(registry, { host, port, setting });
  return { registry, temporalBindAddress: temporalWorkers ? socketAddress(host, temporalPort) : undefined, close: server.close };
}
