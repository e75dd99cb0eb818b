import { Runtime } from '@temporalio/worker';
import { temporalAddress, type SharedEnv } from './config.ts';
import { temporalAnswers } from './temporal-connection.ts';
import { collapseUnreachable, expectActivityOnly, temporalLogger, type StructuredLogger } from './temporal-log.ts';

export type TemporalRuntimeOptions = {
  /**
   * Where the SDK's own Prometheus endpoint listens (`host:port`, GET /metrics): the worker and native-connection
   * metrics, named temporal_* (docs/metrics.md). Unset: the SDK exports no metrics.
   */
  metricsBindAddress?: string;
  /**
   * The Temporal server this process talks to: while it cannot be reached, the SDK's retry lines are collapsed into
   * one that says so and one once it answers again (collapseUnreachable), rather than several a second.
   */
  server?: SharedEnv;
  /** Task queues whose workers run activities only, by design (a render node's): the SDK's "No workflows registered" warning is logged at debug for them. */
  activityOnlyTaskQueues?: readonly string[];
};

let installed = false;

/**
 * Installs the Temporal SDK's Runtime, which it allows once per process and before any worker or native
 * connection (so only the first call counts):
 *
 * - its own logs (worker state changes, activity failures) and those of its core (Rust: connection retries,
 *   heartbeats), which it would otherwise print to stderr as coloured text, go to our structured logger, each
 *   line one JSON line; the core's at WARN and above (its default), and a server that cannot be reached is said
 *   once rather than at every retry (`server`);
 * - its SIGINT/SIGTERM handlers are off: the process's lifecycle stops its parts in order (the API before the
 *   workers that serve it) and stops each worker itself. Left on, the SDK began draining every worker at the
 *   signal, and the lifecycle's own shutdown then failed with `IllegalStateError: Not running. Current state: DRAINING`;
 * - with `metricsBindAddress`, its worker and connection metrics are served for Prometheus there, named as the
 *   metric catalogue lists them: counters end in `_total`, durations are in seconds and say so
 *   (temporal_activity_schedule_to_start_latency_seconds).
 */
export function installTemporalRuntime(logger: StructuredLogger, options: TemporalRuntimeOptions = {}): void {
  if (installed) return;
  installed = true;
  let sdkLogger = temporalLogger(logger);
  if (options.activityOnlyTaskQueues) sdkLogger = expectActivityOnly(sdkLogger, options.activityOnlyTaskQueues);
  const { server } = options;
  if (server) sdkLogger = collapseUnreachable(sdkLogger, { address: temporalAddress(server), answers: () => temporalAnswers(server) });
  Runtime.install({
    shutdownSignals: [],
    logger: sdkLogger,
    telemetryOptions: {
      logging: { forward: {}, filter: { core: 'WARN', other: 'ERROR' } },
      ...(options.metricsBindAddress
        ? { metrics: { prometheus: { bindAddress: options.metricsBindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true } } }
        : {}),
    },
  });
}
