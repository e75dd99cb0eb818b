import { pino, type DestinationStream, type Logger } from 'pino';
import { activeTraceFields, tracingActive } from '@petsing/platform/tracing';

export type { Logger };

/**
 * Structured JSON logs. Credentials never reach a log line: authorization headers, cookies, tokens
 * and keys are redacted wherever they appear in a logged object. In a process that traces (docs/operations.md,
 * "Traces"), a line logged inside a span carries its `trace_id` and `span_id`.
 */
export function createLogger(level: string, name = 'petsing', destination?: DestinationStream): Logger {
  const options = {
    name,
    level,
    ...(tracingActive() ? { mixin: () => activeTraceFields() ?? {} } : {}),
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'req.headers["stripe-signature"]',
        'res.headers["set-cookie"]',
        '*.password',
        '*.token',
        '*.apiKey',
        '*.api_key',
        '*.secret',
        '*.access_token',
        '*.refresh_token',
        '*.client_secret',
        '*.code_verifier',
      ],
      censor: '[redacted]',
    },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** The render node's logging surface (message first), backed by pino. */
export function messageFirstLogger(logger: Logger) {
  return {
    info: (message: string, fields: Record<string, unknown> = {}) => logger.info(fields, message),
    warn: (message: string, fields: Record<string, unknown> = {}) => logger.warn(fields, message),
    error: (message: string, fields: Record<string, unknown> = {}) => logger.error(fields, message),
  };
}
