import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Logger } from '../logging/logger.ts';

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{8,128}$/;
const SECRET_QUERY_PARAMETERS = ['token', 'signature', 'code', 'code_verifier', 'refresh_token', 'state'];

/**
 * Paths that carry a credential: a hosted-audio link (/media/audio/{id}.mp3) is playable by anyone who has
 * it, its unguessable id the only access control. Everything after the prefix goes, whatever its
 * case (the router matches paths case-insensitively) and wherever it stands (an absolute-form request target).
 */
const SECRET_PATH = /(\/media\/audio\/)[^?#]+/i;

/**
 * Query strings can carry secrets (unsubscribe tokens, signed links, OAuth codes) and so can some paths
 * (hosted-audio ids); logs get them masked.
 */
function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = (queryStart < 0 ? url : url.slice(0, queryStart)).replace(SECRET_PATH, '$1redacted');
  if (queryStart < 0) return path;
  const params = new URLSearchParams(url.slice(queryStart + 1));
  for (const name of SECRET_QUERY_PARAMETERS) if (params.has(name)) params.set(name, 'redacted');
  return `${path}?${params.toString()}`;
}

/** The request as its log lines name it; `id` is the one answered as X-Request-Id. */
const describe = (req: Request, res: Response) => ({ id: res.locals.requestId as string | undefined, method: req.method, url: redactUrl(req.originalUrl), remoteAddress: req.socket.remoteAddress });

/**
 * One line per request when its response ends (or the client hangs up first), carrying its id, which is
 * also returned as X-Request-Id and named by every other line logged about the request (logRequestFailure).
 * Written by hand rather than with pino-http, which builds a child logger for every request: on a poll
 * that is not free (docs/benchmarks.md, API poll endpoint).
 */
export function requestLogging(logger: Logger): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    const incoming = req.headers['x-request-id'];
    const id = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    res.setHeader('X-Request-Id', id);
    res.locals.requestId = id;
    res.once('close', () => {
      const aborted = !res.writableFinished;
      const level = aborted ? 'warn' : res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info';
      const fields = { req: describe(req, res), res: { statusCode: res.statusCode }, responseTime: Math.round(performance.now() - started) };
      logger[level](fields, aborted ? 'request aborted' : 'request completed');
    });
    next();
  };
}

/** Logs an error a request ended in (its response says only internal_error) with the request's id. */
export function logRequestFailure(logger: Logger, req: Request, res: Response, error: unknown): void {
  logger.error({ err: error, req: describe(req, res) }, 'request failed');
}
