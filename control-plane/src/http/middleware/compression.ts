import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/**
 * Compresses what is worth it (JSON, HTML, text, the OpenAPI document), brotli or gzip as the client accepts
 * (`Vary: Accept-Encoding`), above compression's 1 KB threshold, so a small poll answer pays nothing. Media is
 * sent as it is (compression's type filter), and event streams (SSE, MCP's streams) too: a compressor holds
 * written bytes back until it has enough of them. The web app's built files carry precompressed copies (site.ts).
 */
export function compressResponses(): RequestHandler {
  return compression({ filter: (req: Request, res: Response) => !String(res.getHeader('Content-Type') ?? '').startsWith('text/event-stream') && compression.filter(req, res) });
}
