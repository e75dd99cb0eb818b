import type { Logger as TemporalLogger, LogLevel, LogMetadata } from '@temporalio/worker';

/** A pino-style logger (fields first), which every petsing process logs through. */
export type StructuredLogger = {
  [level in 'trace' | 'debug' | 'info' | 'warn' | 'error']: (fields: object, message: string) => void;
};

export type { TemporalLogger };

const LEVELS: Record<LogLevel, keyof StructuredLogger> = { TRACE: 'trace', DEBUG: 'debug', INFO: 'info', WARN: 'warn', ERROR: 'error' };

/** Temporal's logger interface (message first, each line one JSON line) on top of a structured logger. */
export function temporalLogger(logger: StructuredLogger): TemporalLogger {
  const at = (level: LogLevel) => (message: string, meta?: LogMetadata) => logger[LEVELS[level]](meta ?? {}, message);
  return {
    log: (level, message, meta) => at(level)(message, meta),
    trace: at('TRACE'),
    debug: at('DEBUG'),
    info: at('INFO'),
    warn: at('WARN'),
    error: at('ERROR'),
  };
}

/** A logger that passes every line through `rewrite`, which answers the level to log it at, or undefined to drop it. */
function rewriting(downstream: TemporalLogger, rewrite: (level: LogLevel, message: string, meta: LogMetadata | undefined) => LogLevel | undefined): TemporalLogger {
  const log = (level: LogLevel, message: string, meta?: LogMetadata) => {
    const rewritten = rewrite(level, message, meta);
    if (rewritten) downstream.log(rewritten, message, meta);
  };
  return {
    log,
    trace: (message, meta) => log('TRACE', message, meta),
    debug: (message, meta) => log('DEBUG', message, meta),
    info: (message, meta) => log('INFO', message, meta),
    warn: (message, meta) => log('WARN', message, meta),
    error: (message, meta) => log('ERROR', message, meta),
  };
}

/** What the SDK's worker says, as a warning, when it runs no workflows. */
const NO_WORKFLOWS = 'No workflows registered, not polling for workflow tasks';

/**
 * The SDK warns at every start of a worker that registers no workflows, which is how a render node's workers are
 * meant to be (activities only): for the workers of `activityOnlyTaskQueues` that warning is logged at debug. A
 * worker of any other queue (the control worker, whose workflows a broken bundle could lose) still warns.
 */
export function expectActivityOnly(downstream: TemporalLogger, activityOnlyTaskQueues: readonly string[]): TemporalLogger {
  return rewriting(downstream, (level, message, meta) =>
    level === 'WARN' && message === NO_WORKFLOWS && meta?.sdkComponent === 'worker' && activityOnlyTaskQueues.includes(String(meta.taskQueue)) ? 'DEBUG' : level,
  );
}

/** A line of the SDK's core saying that a call to the server failed because the server could not be reached. */
function isUnreachable(level: LogLevel, message: string, meta: LogMetadata | undefined): boolean {
  if (meta?.sdkComponent !== 'core' || (level !== 'WARN' && level !== 'ERROR')) return false;
  return /\bUnavailable\b|tcp connect error|connection refused|ConnectionRefused|transport error|broken pipe|connection reset/i.test(`${message} ${String(meta.error ?? '')}`);
}

export type ReachabilityOptions = {
  /** The server's address, for the lines that say it is unreachable and back. */
  address: string;
  /** Whether the server answers now (tried once the SDK has said it is unreachable, every `probeEveryMs`, until it does). */
  answers(): Promise<boolean>;
  probeEveryMs?: number;
};

/**
 * While the Temporal server cannot be reached, the SDK's core retries every poll and heartbeat of every worker and
 * logs each retry (about three lines a second per worker process). This logger says it once instead: the first
 * such line becomes one warning, "Temporal is unreachable", and the rest are counted, not logged, until the server
 * answers again (`answers`, tried every `probeEveryMs`), which one line says, with how long it was out and how
 * many retry lines were left out; at the same level, so that a log kept at `warn` shows the pair. Every other line
 * passes as it is.
 */
export function collapseUnreachable(downstream: TemporalLogger, options: ReachabilityOptions): TemporalLogger {
  const probeEveryMs = options.probeEveryMs ?? 1_000;
  let outage: { since: number; retriesNotLogged: number } | undefined;
  const probe = () => {
    const timer = setTimeout(() => {
      void options.answers().then(
        (answered) => {
          if (!answered || !outage) return probe();
          downstream.warn('Temporal answers again', { address: options.address, unreachableSeconds: Math.round((Date.now() - outage.since) / 100) / 10, retriesNotLogged: outage.retriesNotLogged });
          outage = undefined;
        },
        () => probe(),
      );
    }, probeEveryMs);
    timer.unref();
  };
  return rewriting(downstream, (level, message, meta) => {
    if (!isUnreachable(level, message, meta)) return level;
    if (outage) {
      outage.retriesNotLogged++;
      return undefined;
    }
    outage = { since: Date.now(), retriesNotLogged: 0 };
    downstream.warn('Temporal is unreachable; the SDK retries, and its retry lines are left out of the log until it answers again', {
      address: options.address,
      target: meta?.target,
      firstRetry: message,
      error: meta?.error,
    });
    probe();
    return undefined;
  });
}
