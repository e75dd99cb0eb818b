import { Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';

type StructuredLogger = {
  [level in 'trace' | 'debug' | 'info' | 'warn' | 'error']: (fields: object, message: string) => void;
};

export type TemporalRuntimeOptions = {
  /**
   * Where the SDK's own Prometheus endpoint listens (`host:port`, GET /metrics): the worker and native-connection
   * metrics, named temporal_* (docs/metrics.md). Unset: the SDK exports no metrics.
   */
  metricsBindAddress?: string;
};

let installed = false;

/**
 * Installs the Temporal SDK's Runtime, which it allows once per process and before any worker or native
 * connection (so only the first call counts):
 *
 * - its own logs (worker state changes, activity failures) go to our structured logger instead of the console;
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
  const levels: Record<LogLevel, keyof StructuredLogger> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };
  Runtime.install({
    shutdownSignals: [],
    logger: {
      log: (level: LogLevel, message: string, meta?: LogMetadata) => logger[levels[level]](meta ?? {}, message),
      trace: (message: string, meta?: LogMetadata) => logger.trace(meta ?? {}, message),
      debug: (message: string, meta?: LogMetadata) => logger.debug(meta ?? {}, message),
      info: (message: string, meta?: LogMetadata) => logger.info(meta ?? {}, message),
      warn: (message: string, meta?: LogMetadata) => logger.warn(meta ?? {}, message),
      error: (message: string, meta?: LogMetadata) => logger.error(meta ?? {}, message),
    },
    ...(options.metricsBindAddress
      ? {
          telemetryOptions: {
            metrics: {
              prometheus: { bindAddress: options.metricsBindAddress, countersTotalSuffix: true, unitSuffix: true, useSecondsForDurations: true },
            },
          },
        }
      : {}),
  });
}
