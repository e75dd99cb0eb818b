import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';

type RequestHandler = (request: unknown, extra: unknown) => Promise<unknown>;
type SchemaIssue = { path: PropertyKey[]; message: string };

const schemaIssues = (error: unknown): SchemaIssue[] | undefined =>
  error instanceof Error && Array.isArray((error as { issues?: unknown }).issues) ? (error as unknown as { issues: SchemaIssue[] }).issues : undefined;

/**
 * The MCP SDK checks a request against its method's schema before the handler runs and answers a refusal as
 * -32603 (Internal error) with the schema library's whole dump as the message. JSON-RPC 2.0 names -32602
 * (Invalid params) for it: every handler the server holds is wrapped so that such a refusal is -32602 with one
 * sentence naming the fields (a tools/call without a name: `Invalid params: params.name: ...`). Only a refusal
 * thrown before the handler starts (synchronously, as the SDK's check is) is rewritten; what a handler throws
 * later is answered as before. The SDK keeps the handlers in a private map; test/mcp.test.ts fails if it moves.
 */
export function answerInvalidParams(server: Server): void {
  const handlers = (server as unknown as { _requestHandlers: Map<string, RequestHandler> })._requestHandlers;
  for (const [method, handler] of handlers) {
    handlers.set(method, (request, extra) => {
      try {
        return handler(request, extra);
      } catch (error) {
        const issues = schemaIssues(error);
        if (!issues) throw error;
        const fields = issues.map((issue) => `${issue.path.map(String).join('.') || 'params'}: ${issue.message}`).join('; ');
        // A plain error with a code: McpError would prefix the message with "MCP error -32602: ".
        throw Object.assign(new Error(`Invalid params: ${fields}.`), { code: ErrorCode.InvalidParams });
      }
    });
  }
}
