import type { Request, RequestHandler } from 'express';
import type { Metrics } from '../../services/ports/metrics.ts';

/** The route label of a request no route matched: a 404, or a refusal by middleware in front of the routes (401, 429). */
const UNMATCHED = 'unmatched';

type MatchedRoute = { path: string | string[] | RegExp };

/**
 * Times every request into http_request_duration_seconds, labelled with its Express route template (never the
 * raw URL, so no id reaches a label): the mount path of the router that matched (`/v1`) joined with the route's
 * path (`/videos/:id`). Both are taken when the router assigns `req.route`, since a router puts its parent's
 * `req.baseUrl` back when an error leaves it, before the response is sent.
 */
export function requestMetrics(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    const started = performance.now();
    let template: string | undefined;
    let route: MatchedRoute | undefined;
    Object.defineProperty(req, 'route', {
      configurable: true,
      enumerable: true,
      get: () => route,
      set: (matched: MatchedRoute | undefined) => {
        route = matched;
        template = matched ? joinTemplate(req, matched.path) : undefined;
      },
    });
    res.once('finish', () => metrics.httpRequest(req.method, template ?? UNMATCHED, res.statusCode, (performance.now() - started) / 1000));
    next();
  };
}

function joinTemplate(req: Request, path: MatchedRoute['path']): string {
  const own = Array.isArray(path) ? path.join('|') : String(path);
  const joined = `${req.baseUrl}${own === '/' && req.baseUrl ? '' : own}`;
  return joined || '/';
}
