import { Runtime, type LogLevel, type LogMetadata } from '@temporalio/worker';

type StructuredLogger = {
  [level in 'trace' | 'debug' | 'info' | 'warn' | 'error']: (fields: object, message: string) => void;
};

let installed = false;

/**
 * Sends the Temporal SDK's own logs (worker state changes, activity failures) to our structured logger
 * instead of the console. The SDK allows one Runtime per process, so only the first call counts.
 *
 * It also takes the SDK's own SIGINT/SIGTERM handlers off: the process's lifecycle stops its parts in
 * order (the API before the workers that serve it) and stops each worker itself. Left on, the SDK began
 * draining every worker at the signal, and the lifecycle's own shutdown then failed with
 * `IllegalStateError: Not running. Current state: DRAINING`.
 */
export function installTemporalLogging(logger: StructuredLogger): void {
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
  });
}
