import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { Router, type ErrorRequestHandler, type RequestHandler, type Response } from 'express';
import { z } from 'zod';
import { AppError } from '../../errors/app-error.ts';
import { getServer } from '../../mcp/mcp-server.ts';
import type { AppContext } from '../../runtime/app-context.ts';
import { describeZodError, requestBodyError } from '../errors.ts';
import { jsonBody } from '../json-body.ts';
import { credentialOf, identifyApiCredential, requireApiCredential } from '../middleware/api-auth.ts';
import { crossOrigin } from '../middleware/cross-origin.ts';
import { rateLimit } from '../middleware/rate-limit.ts';
import { SCOPES } from '../../domain/scopes.ts';
import { credentialSecurity, errorResponses, jsonResponse, type OpenAPIRegistry } from '../openapi.ts';
import { JsonRpcBatch, JsonRpcErrorResponse, JsonRpcRequest, JsonRpcResponse } from '../schemas/mcp.schemas.ts';
import { JSON_BODY_LIMIT_KB } from '../validation.ts';

/** JSON-RPC 2.0 error codes this route answers itself; -32000 is the MCP SDK's code for refusals by the transport. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;
const TRANSPORT_ERROR = -32000;

/**
 * POST /mcp: the Model Context Protocol over Streamable HTTP, stateless (a fresh server and transport
 * per request), so any API replica can answer any request. It parses its own body (mounted before the app's
 * JSON parser), after the credential check, so every failure to read a message is a JSON-RPC error; the
 * credential, origin and rate-limit refusals before it are in the shared error shape.
 */
export function mcpRoutes(context: AppContext): Router {
  const { baseUrl, mcpOrigins } = context.config;
  const { credentials, rateLimiter } = context.services;
  const router = Router();

  router.use(crossOrigin(mcpOrigins), allowOrigins(mcpOrigins));

  // Stateless mode has no stream to open with GET and no session to end with DELETE (MCP transport spec).
  const methodNotAllowed: RequestHandler = (_req, res) => {
    sendJsonRpcError(res.set('Allow', 'POST'), 405, TRANSPORT_ERROR, 'Method not allowed: send JSON-RPC messages with POST.');
  };
  router.get('/', methodNotAllowed);
  router.delete('/', methodNotAllowed);

  router.post(
    '/',
    identifyApiCredential((token) => credentials.verify(token, 'mcp')),
    // Every message counts as a read; the tools that write also count against the write limit.
    rateLimit(rateLimiter, 'read'),
    requireApiCredential(`${baseUrl}/.well-known/oauth-protected-resource/mcp`, credentials.audienceHint('mcp')),
    jsonBody(JSON_BODY_LIMIT_KB),
    async (req, res) => {
      // Undefined when the body is not JSON: the transport answers 415 for that.
      if (req.body !== undefined) {
        const message = (Array.isArray(req.body) ? JsonRpcBatch : JsonRpcRequest).safeParse(req.body);
        if (!message.success) {
          sendJsonRpcError(res, 400, INVALID_REQUEST, `Invalid Request: ${describeZodError(message.error)}.`);
          return;
        }
      }
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
  router.use(jsonRpcBodyErrors());

  return router;
}

function sendJsonRpcError(res: Response, status: number, code: number, message: string): void {
  res.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null } satisfies z.infer<typeof JsonRpcErrorResponse>);
}

/** A body the JSON parser refused is a JSON-RPC error too: -32700 for malformed or too deeply nested JSON, else the transport's code. */
function jsonRpcBodyErrors(): ErrorRequestHandler {
  return (error: unknown, _req, res, next) => {
    const bodyError = requestBodyError(error);
    if (!bodyError) {
      next(error);
      return;
    }
    const unreadable = bodyError.code === 'malformed_json' || bodyError.code === 'nesting_too_deep';
    sendJsonRpcError(res, bodyError.status, unreadable ? PARSE_ERROR : TRANSPORT_ERROR, bodyError.message);
  };
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

const jsonRpcError = (description: string) => jsonResponse(description, JsonRpcErrorResponse);

export function registerMcpPaths(registry: OpenAPIRegistry): void {
  registry.registerPath({
    method: 'post', path: '/mcp', operationId: 'callMcp', tags: ['mcp'], summary: 'Model Context Protocol endpoint (Streamable HTTP)',
    description:
      'JSON-RPC 2.0 messages of the Model Context Protocol, stateless. The tools cover the same account, videos and credits as /v1; ' +
      'list them with tools/list. The answer is JSON, or an SSE stream when Accept includes text/event-stream. A tool failure (bad ' +
      'arguments and unknown tools included) is a result with isError true whose text is the /v1 error body; a message that cannot be ' +
      'read is a JSON-RPC error: -32700 (parse error), -32600 (invalid request), -32601 (unknown method) or -32602 (params that break the ' +
      'method\'s schema, such as a tools/call without a name). OAuth tokens must have been requested for the resource {BASE_URL}/mcp (RFC 8707).',
    security: credentialSecurity(...SCOPES),
    request: { body: { required: true, content: { 'application/json': { schema: z.union([JsonRpcRequest, JsonRpcBatch]) } } } },
    responses: {
      200: {
        description: 'The JSON-RPC response (an array of them for a batch), as JSON or as an SSE stream of JSON-RPC messages.',
        content: {
          'application/json': { schema: z.union([JsonRpcResponse, z.array(JsonRpcResponse).min(1)]) },
          'text/event-stream': { schema: z.string() },
        },
      },
      202: { description: 'Accepted notifications only; no body.' },
      400: jsonRpcError(
        'The body is not JSON, or JSON nested more than 32 deep (-32700), not a JSON-RPC request or notification, or an empty batch, or a ' +
          'request id is null (-32600), ' +
          'or the MCP-Protocol-Version header names an unsupported version (-32000).',
      ),
      ...errorResponses('unauthorized', 'forbidden', 'rate_limited'),
      406: jsonRpcError('Accept allows neither application/json nor text/event-stream (-32000).'),
      413: jsonRpcError(`The body is larger than ${JSON_BODY_LIMIT_KB} kB (-32000).`),
      415: jsonRpcError('Content-Type is not application/json (-32000).'),
    },
  });
}
