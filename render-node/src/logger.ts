/** The logging surface the render node needs; the worker passes its own (pino, Temporal's logger, ...). */
export interface Logger {
  info(message: string, fields?: Record<string, unknown>): void;
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

export const silentLogger: Logger = {
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** A logger that adds `fields` to every line (a render's video id and workflow id, so each line can be found by them). */
export const withFields = (logger: Logger, fields: Record<string, unknown>): Logger => ({
  info: (message, extra) => logger.info(message, { ...fields, ...extra }),
  warn: (message, extra) => logger.warn(message, { ...fields, ...extra }),
  error: (message, extra) => logger.error(message, { ...fields, ...extra }),
});
