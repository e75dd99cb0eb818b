import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pinoHttp } from 'pino-http';
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
export function redactUrl(url: string): string {
  const queryStart = url.indexOf('?');
  const path = (queryStart < 0 ? url : url.slice(0, queryStart)).replace(SECRET_PATH, '$1redacted');
  if (queryStart < 0) return path;
  const params = new URLSearchParams(url.slice(queryStart + 1));
  for (const name of SECRET_QUERY_PARAMETERS) if (params.has(name)) params.set(name, 'redacted');
  return `${path}?${params.toString()}`;
}

/** Every log line of a request carries its id, which is also returned as X-Request-Id. */
export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req: IncomingMessage, res) => {
      const incoming = req.headers['x-request-id'];
      const id = typeof incoming === 'string' && SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
      res.setHeader('X-Request-Id', id);
      return id;
    },
    customLogLevel: (_req, res, error) => (error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info'),
    serializers: {
      req: (req: { id: string; method: string; url: string; remoteAddress?: string }) => ({
        id: req.id,
        method: req.method,
        url: redactUrl(req.url),
        remoteAddress: req.remoteAddress,
      }),
      res: (res: { statusCode: number }) => ({ statusCode: res.statusCode }),
    },
  });
}
