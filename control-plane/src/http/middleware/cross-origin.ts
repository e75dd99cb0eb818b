import cors from 'cors';
import type { RequestHandler } from 'express';

/** What a browser client may send and read cross-origin (credentials are bearer headers, never cookies). */
const ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'Idempotency-Key', 'Mcp-Protocol-Version', 'Mcp-Session-Id', 'Last-Event-ID'];
const EXPOSED_HEADERS = ['RateLimit', 'RateLimit-Policy', 'Retry-After', 'X-Request-Id', 'Link', 'Deprecation', 'Sunset', 'WWW-Authenticate'];

/**
 * CORS for browser clients: the web app on SITE_URL, single-page OAuth clients, MCP inspectors. The service
 * authenticates with bearer tokens in the Authorization header only, so a cross-origin page gains nothing a
 * script elsewhere could not do: by default every origin may call (`*`). An operator can narrow it to a list.
 */
export function crossOrigin(allowed: 'any' | ReadonlySet<string>): RequestHandler {
  return cors({
    origin: allowed === 'any' ? '*' : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: ['GET', 'HEAD', 'POST', 'DELETE'],
    allowedHeaders: ALLOWED_HEADERS,
    exposedHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
  });
}
