import { z } from 'zod';

const JsonRpcId = z.union([z.string(), z.number().int(), z.null()]);

export const JsonRpcRequest = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId.optional().meta({ description: 'Absent on notifications.' }),
    method: z.string().meta({ examples: ['initialize', 'tools/list', 'tools/call'] }),
    params: z.record(z.string(), z.unknown()).optional(),
  })
  .meta({ id: 'JsonRpcRequest' });

export const JsonRpcResponse = z
  .object({
    jsonrpc: z.literal('2.0'),
    id: JsonRpcId,
    result: z.record(z.string(), z.unknown()).optional().meta({ description: 'Present on success.' }),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).optional().meta({ description: 'Present on failure.' }),
  })
  .meta({ id: 'JsonRpcResponse' });
