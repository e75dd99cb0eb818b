import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { AppError } from '../../errors/app-error.ts';
import { getServer } from '../../mcp/mcp-server.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { credentialOf, identifyApiCredential, requireApiCredential } from '../middleware/api-auth.ts';
import { crossOrigin } from '../middleware/cross-origin.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { errorResponses, securitySchemes, type OpenAPIRegistry } from '../openapi.ts';
import { JsonRpcRequest, JsonRpcResponse } from '../schemas/mcp.schemas.ts';

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (a fresh server and transport
 * per request), so any API replica can answer any request.
 */
export function mcpRoutes(context: AppContext): Router {
  const { baseUrl, mcpOrigins } = context.config;
  const { credentials, rateLimiter } = context.services;
  const router = Router();

  router.use(crossOrigin(mcpOrigins), allowOrigins(mcpOrigins));

  // Stateless mode has no stream to open with GET and no session to end with DELETE (MCP transport spec).
  const methodNotAllowed: RequestHandler = (_req, res) => {
    res.status(405).set('Allow', 'POST').json({ jsonrpc: '2.0', error: { code: -32000, message: 'Method not allowed: send JSON-RPC messages with POST.' }, id: null });
  };
  router.get('/', methodNotAllowed);
  router.delete('/', methodNotAllowed);

  router.post(
    '/',
    identifyApiCredential((token) => credentials.verify(token)),
    // Every message counts as a read; the tools that write also count against the write limit.
    rateLimit(rateLimiter, 'read'),
    requireApiCredential(`${baseUrl}/.well-known/oauth-protected-resource`),
    async (req, res) => {
      const accept = req.get('accept') ?? '';
      const streams = accept.includes('text/event-stream');
      // The SDK insists on both media types even when it answers in JSON; a JSON-only client gets JSON.
      if (!streams && req.accepts('application/json')) req.headers.accept = 'application/json, text/event-stream';
      const server = getServer(context, credentialOf(res));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !streams });
      res.on('close', () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    },
  );

  return router;
}

/**
 * DNS-rebinding protection: a browser always sends Origin, so a page on another site (or a rebound host
 * name) is refused; non-browser clients send none and are let through to the credential check.
 */
function allowOrigins(allowed: ReadonlySet<string>): RequestHandler {
  return (req, _res, next) => {
    const origin = req.get('origin');
    if (origin !== undefined && !allowed.has(origin)) {
      throw new AppError('forbidden', `Requests from origin ${origin} may not call /mcp.`, {
        hint: 'Call /mcp from a server-side client, or ask the operator to add this origin to MCP_ALLOWED_ORIGINS.',
      });
    }
    next();
  };
}

export function registerMcpPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/mcp', operationId: 'callMcp', tags: ['mcp'], summary: 'Model Context Protocol endpoint (Streamable HTTP)',
    description:
      'JSON-RPC 2.0 messages of the Model Context Protocol, stateless. The tools cover the same account, videos and credits as /v1; ' +
      'list them with tools/list. The answer is JSON, or an SSE stream when Accept includes text/event-stream. A tool failure is a ' +
      'result with isError true whose text is the /v1 error body; protocol failures are JSON-RPC errors.',
    security: [{ [securitySchemes.apiKey]: [] }, { [securitySchemes.oauth]: ['videos:read', 'videos:write'] }],
    request: { body: { required: true, content: { 'application/json': { schema: JsonRpcRequest } } } },
    responses: {
      200: {
        description: 'The JSON-RPC response, as JSON or as an SSE stream of JSON-RPC messages.',
        content: { 'application/json': { schema: JsonRpcResponse }, 'text/event-stream': { schema: z.string() } },
      },
      202: { description: 'Accepted a notification or response; no body.' },
      ...errorResponses('unauthorized', 'forbidden', 'rate_limited'),
    },
  });
}
