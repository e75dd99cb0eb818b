import { z } from 'zod';

/**
 * A request id: a string or an integer. Never null: the MCP specification forbids it, and JSON-RPC 2.0
 * reserves null for errors about a request whose id could not be read.
 */
const JsonRpcId = z.union([z.string(), z.number().int()], { error: 'must be a string or an integer (never null)' });

export const JsonRpcRequest = z
  .strictObject({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId.optional().meta({ description: 'A string or an integer, never null; absent on notifications.' }),
    method: z.string().meta({ examples: ['initialize', 'tools/list', 'tools/call'] }),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcRequest', description: 'A JSON-RPC 2.0 request, or a notification (without id). No other members.' });

/** The most messages one batch may carry (the MCP SDK's limit). */
const MAX_BATCH_MESSAGES = 100;

export const JsonRpcBatch = z
  .array(JsonRpcRequest)
  .min(1)
  .max(MAX_BATCH_MESSAGES)
  .meta({
    id: 'JsonRpcBatch',
    description: `A JSON-RPC 2.0 batch of 1 to ${MAX_BATCH_MESSAGES} messages, for clients of MCP versions before 2025-06-18 (later ones send one message a request). An empty batch is an Invalid Request.`,
  });

export const JsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId,
    result: z.record(z.string(), z.unknown()).optional().meta({ description: 'Present on success.' }),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional().meta({ description: 'Present on failure.' }),
  })
  .meta({ id: 'JsonRpcResponse' });

export const JsonRpcErrorResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: z.null().meta({ description: 'Always null: the failure concerns the HTTP request as a whole.' }),
    error: z.object({
      code: z.number().int().meta({ description: '-32700 parse error (not JSON, or nested more than 32 deep), -32600 invalid request (not a JSON-RPC message this server takes), -32000 refused by the transport.' }),
      message: z.string(),
      data: z.unknown().optional(),
    }),
  })
  .meta({ id: 'JsonRpcErrorResponse', description: 'A JSON-RPC 2.0 error answered instead of handling the message.' });
