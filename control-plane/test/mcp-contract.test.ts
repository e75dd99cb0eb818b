import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount } from '../../test/support/accounts.ts';
import { json, type Json } from '../../test/support/http.ts';
import { expectDocumentedResponses, type RecordedResponse } from '../../test/support/openapi.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/** Issue 14: POST /mcp answers what /openapi.json says it does, and tool failures carry the /v1 error body. */
describe('MCP contract', () => {
  let service: TestService;
  let apiKey: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    service = await startTestService();
    apiKey = (await createTestAccount(service.context, 'mcp-contract@example.com', 0)).readWrite;
  });
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await service.stop();
  });

  const connect = async () => {
    const transport = new StreamableHTTPClientTransport(new URL(`${service.baseUrl}/mcp`), { requestInit: { headers: { Authorization: `Bearer ${apiKey}` } } });
    const client = new Client({ name: 'contract-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const post = (body: string, headers: Record<string, string> = {}) =>
    fetch(`${service.baseUrl}/mcp`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/json', ...headers },
      body,
    });
  const record = async (response: Response): Promise<RecordedResponse> => {
    const text = await response.text();
    return { operation: 'callMcp', status: response.status, body: text === '' ? undefined : JSON.parse(text) };
  };
  /** The /v1 error body carried in a failed tool result's text. */
  const errorOf = (result: CallToolResult) => {
    expect(result.isError).toBe(true);
    const content = result.content[0];
    expect(content?.type).toBe('text');
    const body = JSON.parse(content?.type === 'text' ? content.text : 'null');
    const retryAfter = body.error.retry_after_seconds === undefined ? {} : { retry_after_seconds: expect.any(Number) };
    expect(body).toEqual({
      error: { code: expect.any(String), message: expect.any(String), status: expect.any(Number), hint: expect.any(String), documentation_url: expect.any(String), retryable: expect.any(Boolean), ...retryAfter },
      message: body.error.message,
    });
    return body.error as { code: string; message: string; status: number; hint: string; documentation_url: string };
  };

  describe('tool argument errors', () => {
    it('are tool results with isError and the /v1 ErrorDetail, not protocol errors', async () => {
      const client = await connect();
      const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;

      const notUuid = errorOf(await call('get_video', { video_id: 'not-a-uuid' }));
      expect(notUuid).toMatchObject({ code: 'invalid_request', status: 400, documentation_url: `${service.baseUrl}/docs/errors#invalid_request` });
      expect(notUuid.message).toContain('video_id');
      expect(errorOf(await call('delete_video', { video_id: 42 })).message).toContain('video_id');

      const numericTemplate = errorOf(await call('create_video', { template_id: 1, image_url: 'https://example.com/pet.png' }));
      expect(numericTemplate).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(numericTemplate.message).toContain('template_id');

      const tooMany = errorOf(await call('list_videos', { limit: 1000 }));
      expect(tooMany).toMatchObject({ code: 'invalid_request', status: 400 });
      expect(tooMany.message).toContain('limit');

      const unknown = errorOf(await call('mint_credits', {}));
      expect(unknown).toMatchObject({ code: 'unknown_tool', status: 400, documentation_url: `${service.baseUrl}/docs/errors#unknown_tool` });
      expect(unknown.message).toContain('mint_credits');
      expect(unknown.hint).toContain('tools/list');

      // Valid calls are untouched: defaults apply and the result is structured.
      const listed = await call('list_videos', {});
      expect(listed.isError).toBeFalsy();
      expect(listed.structuredContent).toEqual({ object: 'list', data: [] });
      expect(errorOf(await call('get_video', { video_id: crypto.randomUUID() })).code).toBe('not_found');
    });

    it('match what /v1 answers for the same refused field, hint included', async () => {
      const client = await connect();
      const request = { template_id: '1', image_url: 'https://example.com/pet.png', aspect: 'round' };
      const fromTool = errorOf((await client.callTool({ name: 'create_video', arguments: request })) as CallToolResult);
      const fromV1 = await fetch(`${service.baseUrl}/v1/videos`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(request),
      });
      expect(fromV1.status).toBe(400);
      const { error } = await json(fromV1);
      expect(fromTool).toMatchObject({ code: error.code, status: error.status, hint: error.hint, documentation_url: error.documentation_url });
      expect(fromTool.message).toContain('aspect');
    });
  });

  describe('messages the endpoint cannot take', () => {
    it('refuses a null request id with a JSON-RPC Invalid Request (400), as the documented schema says', async () => {
      const response = await post(JSON.stringify({ jsonrpc: '2.0', id: null, method: 'tools/list' }));
      expect(response.status).toBe(400);
      const body = await json(response);
      expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('id') } });

      const document = await json(fetch(`${service.baseUrl}/openapi.json`));
      const id = document.components.schemas.JsonRpcRequest.properties.id;
      expect(id.anyOf).toEqual([{ type: 'string' }, { type: 'integer' }]);
    });

    it('answers an empty batch with a JSON-RPC Invalid Request (400), not an empty 202', async () => {
      const response = await post('[]');
      expect(response.status).toBe(400);
      expect(await json(response)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: expect.stringContaining('Invalid Request') } });
    });

    it('answers malformed JSON with a JSON-RPC Parse error (400)', async () => {
      const response = await post('{"jsonrpc": "2.0", ');
      expect(response.status).toBe(400);
      expect(await json(response)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: expect.any(String) } });
    });

    it('documents every status it answers, with the schema of each body', async () => {
      const tools = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
      const recorded = [
        await record(await post(tools)),
        await record(await post(`[${tools}, ${JSON.stringify({ jsonrpc: '2.0', id: 'two', method: 'ping' })}]`)),
        await record(await post(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }))),
        await record(await post(JSON.stringify({ jsonrpc: '2.0', id: null, method: 'tools/list' }))),
        await record(await post('[]')),
        await record(await post('{')),
        await record(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', extra: true }))),
        await record(await post(tools, { 'mcp-protocol-version': '1999-01-01' })),
        await record(await post(tools, { 'content-type': 'text/plain' })),
        await record(await post(tools, { accept: 'text/html' })),
        await record(await post(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { padding: 'x'.repeat(101 * 1024) } }))),
        await record(await post(tools, { authorization: 'Bearer psk_live_not-a-key' })),
      ];
      expect(recorded.map((response) => response.status)).toEqual([200, 200, 202, 400, 400, 400, 400, 400, 415, 406, 413, 401]);
      expect((recorded[1]!.body as Json[]).map((response) => response.id)).toEqual([1, 'two']);
      expect(recorded.slice(3, 8).map((response) => (response.body as Json).error.code)).toEqual([-32600, -32600, -32700, -32600, -32000]);
      for (const response of recorded.slice(8, 11)) expect((response.body as Json).jsonrpc).toBe('2.0');

      const checked = await expectDocumentedResponses(service.baseUrl, recorded);
      expect([...checked].sort()).toEqual(['callMcp 200', 'callMcp 400', 'callMcp 401', 'callMcp 406', 'callMcp 413', 'callMcp 415']);
    });
  });
});
