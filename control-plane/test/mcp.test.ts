import { auth, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { json } from '../../test/support/http.ts';
import { authorizeAs } from '../../test/support/oauth-authorization.ts';
import { startRenderingService, type startImageHost } from '../../test/support/image-host.ts';
import type { TestService } from '../../test/support/test-service.ts';
import { createTestAccount } from '../../test/support/accounts.ts';
import { seedTemplates } from '../../test/support/templates.ts';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';
const ALLOWED_ORIGIN = 'http://localhost:6274';

/** An in-memory OAuth client of the kind an MCP host keeps; the authorization URL is handed to the test. */
class TestOAuthProvider implements OAuthClientProvider {
  authorizationUrl: URL | undefined;
  private client: OAuthClientInformationMixed | undefined;
  private stored: OAuthTokens | undefined;
  private verifier = '';

  get redirectUrl() {
    return REDIRECT_URI;
  }
  get clientMetadata(): OAuthClientMetadata {
    return { client_name: 'MCP Test Agent', redirect_uris: [REDIRECT_URI], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.stored;
  }
  saveTokens(tokens: OAuthTokens) {
    this.stored = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

/** Approves through the authorization page's endpoints like a person in a browser would; returns the authorization code. */
async function approve(url: URL, email: string): Promise<string> {
  return (await authorizeAs(url.origin, url, email)).searchParams.get('code')!;
}

const errorOf = (result: CallToolResult) => {
  expect(result.isError).toBe(true);
  const text = result.content[0];
  return JSON.parse(text?.type === 'text' ? text.text : '{}').error as { code: string; status: number; hint: string; documentation_url: string; retryable: boolean };
};

describe('MCP endpoint', () => {
  let service: TestService;
  let imageHost: Awaited<ReturnType<typeof startImageHost>>;
  let mcpUrl: URL;
  const clients: Client[] = [];

  const connect = async (options: { token?: string; authProvider?: OAuthClientProvider; fetch?: typeof fetch } = {}) => {
    const transport = new StreamableHTTPClientTransport(mcpUrl, {
      ...(options.token ? { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } } : {}),
      ...(options.authProvider ? { authProvider: options.authProvider } : {}),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const client = new Client({ name: 'petsing-test', version: '1.0.0' });
    await client.connect(transport);
    clients.push(client);
    return client;
  };
  const call = (client: Client, name: string, args: Record<string, unknown> = {}) => client.callTool({ name, arguments: args }) as Promise<CallToolResult>;
  const newAccount = (email: string, credits: number) => createTestAccount(service.context, email, credits);
  const post = (headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) =>
    fetch(mcpUrl, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

  beforeAll(async () => {
    ({ service, imageHost } = await startRenderingService({ MCP_ALLOWED_ORIGINS: ALLOWED_ORIGIN }));
    await seedTemplates(service.context);
    mcpUrl = new URL(`${service.baseUrl}/mcp`);
  }, 180_000);
  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await service?.stop();
    await imageHost?.close();
  });

  it('initializes and lists every tool with schemas and annotations', async () => {
    const owner = await newAccount('lister@example.com', 0);
    const client = await connect({ token: owner.readOnly });
    expect(client.getServerVersion()).toMatchObject({ name: 'petsing' });
    expect(client.getInstructions()).toContain('create_video');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(
      [
        'cancel_video', 'check_photo', 'create_video', 'delete_video', 'extract_soundtrack', 'get_account', 'get_credits', 'get_video', 'list_templates', 'list_videos',
        'list_voices', 'make_speech', 'wait_for_video',
      ],
    );
    for (const tool of tools) {
      expect(tool.title, tool.name).toEqual(expect.any(String));
      expect(tool.description!.length, tool.name).toBeGreaterThan(40);
      expect(tool.inputSchema.type).toBe('object');
      expect(tool.outputSchema?.type, tool.name).toBe('object');
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: expect.any(Boolean), idempotentHint: expect.any(Boolean), openWorldHint: expect.any(Boolean) });
    }
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    expect(byName.create_video!.inputSchema.required ?? []).toEqual([]);
    expect(Object.keys(byName.create_video!.inputSchema.properties ?? {}).sort()).toEqual(['aspect', 'audio_id', 'audio_start_seconds', 'deadline_seconds', 'face', 'image_id', 'image_url', 'template_id', 'webhook_url']);
    expect(byName.make_speech!.inputSchema.required).toEqual(['text', 'voice_id']);
    expect(byName.check_photo!.inputSchema.required).toEqual(['image_url']);
    expect(byName.create_video!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: false });
    expect(byName.delete_video!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
    expect(byName.cancel_video!.annotations).toMatchObject({ readOnlyHint: false, destructiveHint: true });
  });

  it('creates a video, waits for the real render with progress, and serves every tool from the /v1 services', async () => {
    const owner = await newAccount('agent@example.com', 3);
    const client = await connect({ token: owner.readWrite });

    const templates = await call(client, 'list_templates');
    expect(templates.structuredContent).toMatchObject({ object: 'list', data: expect.arrayContaining([expect.objectContaining({ id: '1' })]) });
    expect(JSON.parse((templates.content[0] as { text: string }).text)).toEqual(templates.structuredContent);

    expect((await call(client, 'get_account')).structuredContent).toEqual({ user_id: owner.id, credit_balance: 3, credits_per_video: 1, scopes: ['videos:read', 'videos:write'] });

    const created = await call(client, 'create_video', { template_id: '1', image_url: imageHost.url('/pet.png') });
    expect(created.isError).toBeFalsy();
    const id = (created.structuredContent as { id: string }).id;
    expect(created.structuredContent).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      status: 'processing',
      template_id: '1',
      aspect: 'square',
      credits_remaining: 2,
      poll_url: `${service.baseUrl}/v1/videos/${id}`,
      next_step: expect.stringContaining('wait_for_video'),
    });

    const progress: number[] = [];
    let waited: CallToolResult | undefined;
    for (let attempt = 0; attempt < 3 && !(waited?.structuredContent as { finished?: boolean } | undefined)?.finished; attempt++) {
      waited = (await client.callTool({ name: 'wait_for_video', arguments: { video_id: id, timeout_seconds: 120 } }, undefined, {
        timeout: 150_000,
        onprogress: ({ progress: value }) => progress.push(value),
      })) as CallToolResult;
    }
    expect(waited!.structuredContent).toMatchObject({ id, status: 'completed', finished: true, progress: 100, video_url: expect.any(String), error: null });
    expect(progress.length).toBeGreaterThan(0);
    expect(progress).toEqual([...progress].sort((a, b) => a - b));
    expect(progress.at(-1)).toBe(100);
    const download = await fetch((waited!.structuredContent as { video_url: string }).video_url);
    expect(download.headers.get('content-type')).toBe('video/mp4');

    const fromV1 = await json(fetch(`${service.baseUrl}/v1/videos/${id}`, { headers: { Authorization: `Bearer ${owner.readOnly}` } }));
    const got = (await call(client, 'get_video', { video_id: id })).structuredContent as Record<string, unknown>;
    expect({ ...got, video_url: null, thumbnail_url: null }).toEqual({ ...fromV1, video_url: null, thumbnail_url: null });

    expect((await call(client, 'list_videos', { limit: 5 })).structuredContent).toMatchObject({ object: 'list', data: [expect.objectContaining({ id })] });
    expect((await call(client, 'get_credits')).structuredContent).toMatchObject({ balance: 2, credits_per_video: 1, recent: [{ delta: -1, reason: 'video_create' }, { delta: 3, reason: 'grant' }] });

    expect((await call(client, 'delete_video', { video_id: id })).structuredContent).toEqual({ id, deleted: true });
    expect(errorOf(await call(client, 'get_video', { video_id: id })).code).toBe('not_found');
  }, 420_000);

  it('answers insufficient credits, missing scope, not found and refused input as tool errors with /v1 codes', async () => {
    const broke = await newAccount('broke@example.com', 0);
    const readWrite = await connect({ token: broke.readWrite });
    const request = { template_id: '1', image_url: imageHost.url('/pet.png') };

    const poor = errorOf(await call(readWrite, 'create_video', request));
    expect(poor).toMatchObject({ code: 'insufficient_credits', status: 402, hint: expect.any(String), documentation_url: `${service.baseUrl}/docs/errors#insufficient_credits` });
    expect(errorOf(await call(readWrite, 'create_video', { ...request, template_id: '999' })).code).toBe('unknown_template');
    expect(errorOf(await call(readWrite, 'create_video', { ...request, image_url: 'https://10.0.0.1/pet.png' })).code).toBe('image_url_refused');
    expect(errorOf(await call(readWrite, 'get_video', { video_id: crypto.randomUUID() })).code).toBe('not_found');
    expect(errorOf(await call(readWrite, 'delete_video', { video_id: crypto.randomUUID() })).code).toBe('not_found');
    expect(errorOf(await call(readWrite, 'cancel_video', { video_id: crypto.randomUUID() })).code).toBe('not_found');
    // Arguments outside the tool's schema are refused before it runs, as /v1 refuses a body.
    expect(errorOf(await call(readWrite, 'list_videos', { limit: 1000 })).code).toBe('invalid_request');

    const readOnly = await connect({ token: broke.readOnly });
    expect(errorOf(await call(readOnly, 'create_video', request))).toMatchObject({ code: 'forbidden', status: 403 });
    expect(errorOf(await call(readOnly, 'delete_video', { video_id: crypto.randomUUID() })).code).toBe('forbidden');
    expect(errorOf(await call(readOnly, 'cancel_video', { video_id: crypto.randomUUID() })).code).toBe('forbidden');
    expect((await call(readOnly, 'get_credits')).isError).toBeFalsy();

    expect(errorOf(await call(readOnly, 'mint_credits')).code).toBe('unknown_tool');
  });

  it('cancels a rendering video with cancel_video, as POST /v1/videos/{id}/cancel does: failed with code canceled, the credit refunded', async () => {
    const owner = await newAccount('canceler@example.com', 1);
    const client = await connect({ token: owner.readWrite });
    const created = await call(client, 'create_video', { template_id: '1', image_url: imageHost.url('/pet.png') });
    const id = (created.structuredContent as { id: string }).id;
    const canceled = (await call(client, 'cancel_video', { video_id: id })).structuredContent;
    expect(canceled).toMatchObject({ id, status: 'failed', error: { code: 'canceled' } });
    expect((await call(client, 'get_credits')).structuredContent).toMatchObject({ balance: 1, recent: [{ delta: 1, reason: 'refund', video_id: id }, { delta: -1, reason: 'video_create', video_id: id }, { delta: 1, reason: 'grant', video_id: null }] });
    // Again: answered as it is, refunded once.
    expect((await call(client, 'cancel_video', { video_id: id })).structuredContent).toMatchObject({ id, status: 'failed', error: { code: 'canceled' } });
    expect((await call(client, 'get_credits')).structuredContent).toMatchObject({ balance: 1 });
  });

  it('makes speech in a listed voice and sings it with create_video audio_id; exactly one of template_id and audio_id', async () => {
    const owner = await newAccount('speaker@example.com', 1);
    const client = await connect({ token: owner.readWrite });
    const voices = (await call(client, 'list_voices')).structuredContent as { object: string; data: { id: string; sample_url: string }[] };
    expect(voices).toEqual(await json(fetch(`${service.baseUrl}/v1/voices`, { headers: { Authorization: `Bearer ${owner.readOnly}` } })));
    expect(voices.data.length).toBeGreaterThan(0);

    const speech = await call(client, 'make_speech', { text: 'Hello! I am your cat, and I sing.', voice_id: voices.data[0]!.id });
    expect(speech.isError).toBeFalsy();
    expect(speech.structuredContent).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), duration_seconds: expect.any(Number), expires_at: expect.any(String) });
    const audioId = (speech.structuredContent as { id: string }).id;
    expect(errorOf(await call(client, 'make_speech', { text: 'Hello', voice_id: 'no-such-voice' }))).toMatchObject({ code: 'unknown_voice', retryable: false });
    expect(errorOf(await call(client, 'extract_soundtrack', { video_url: 'https://example.com/video/1' }))).toMatchObject({ code: 'unsupported_video_url', status: 400 });

    const photo = { image_url: imageHost.url('/pet.png') };
    expect(errorOf(await call(client, 'create_video', { ...photo, template_id: '1', audio_id: audioId }))).toMatchObject({ code: 'template_or_audio_required', status: 400, retryable: false });
    expect(errorOf(await call(client, 'create_video', photo)).code).toBe('template_or_audio_required');
    expect(errorOf(await call(client, 'create_video', { ...photo, audio_id: crypto.randomUUID() }))).toMatchObject({ code: 'unknown_audio', status: 404 });

    const created = await call(client, 'create_video', { ...photo, audio_id: audioId });
    expect(created.structuredContent).toMatchObject({ status: 'processing', audio_id: audioId, credits_remaining: 0 });
    expect(created.structuredContent).not.toHaveProperty('template_id');
    const video = (await call(client, 'get_video', { video_id: (created.structuredContent as { id: string }).id })).structuredContent;
    expect(video).toMatchObject({ template_id: null, audio_id: audioId });

    const poor = errorOf(await call(client, 'create_video', { ...photo, audio_id: audioId }));
    expect(poor).toMatchObject({ code: 'insufficient_credits', status: 402, retryable: false, credit_balance: 0, credits_required: 1 });
    const reader = await connect({ token: owner.readOnly });
    expect((await call(reader, 'list_voices')).isError).toBeFalsy();
    expect(errorOf(await call(reader, 'make_speech', { text: 'Hello', voice_id: voices.data[0]!.id })).code).toBe('forbidden');
  }, 120_000);

  it('counts write tools against the write rate limit', async () => {
    const account = await newAccount('busy@example.com', 0);
    const client = await connect({ token: account.readWrite });
    const codes = new Set<string>();
    // The limit (40 a minute here) counts per fixed window: calls that straddle a window's end need up to twice that.
    for (let attempt = 0; attempt < 81 && !codes.has('rate_limited'); attempt++) codes.add(errorOf(await call(client, 'delete_video', { video_id: crypto.randomUUID() })).code);
    expect([...codes].sort()).toEqual(['not_found', 'rate_limited']);
  });

  it('refuses callers without a credential with 401 pointing at the protected-resource metadata of /mcp', async () => {
    const response = await post({ accept: 'application/json, text/event-stream' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${service.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    expect((await json(response)).error.code).toBe('unauthorized');
    expect(response.headers.get('ratelimit-policy')).toContain('read');
  });

  it('validates Origin, answers JSON or SSE by Accept, and refuses GET and DELETE with 405', async () => {
    const { readOnly } = await newAccount('transport@example.com', 0);
    const auth = { authorization: `Bearer ${readOnly}` };

    const foreign = await post({ ...auth, accept: 'application/json, text/event-stream', origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    expect((await json(foreign)).error.code).toBe('forbidden');
    for (const origin of [ALLOWED_ORIGIN, service.baseUrl]) {
      expect((await post({ ...auth, accept: 'application/json, text/event-stream', origin })).status, origin).toBe(200);
    }

    const plain = await post({ ...auth, accept: 'application/json' });
    expect(plain.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(plain)).result.tools).toHaveLength(13);
    const sse = await post({ ...auth, accept: 'application/json, text/event-stream' });
    expect(sse.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(await sse.text()).toMatch(/^event: message\ndata: \{"result":\{"tools"/m);

    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl, { method, headers: { ...auth, accept: 'text/event-stream' } });
      expect(response.status, method).toBe(405);
      expect(response.headers.get('allow')).toBe('POST');
      expect((await json(response)).jsonrpc).toBe('2.0');
    }
  });

  it('signs an agent in with the SDK OAuth client: discovery, registration, PKCE, token, then tools/call', async () => {
    const provider = new TestOAuthProvider();
    const requests: string[] = [];
    const recordingFetch: typeof fetch = async (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      requests.push(`${init?.method ?? (input instanceof Request ? input.method : 'GET')} ${url.pathname}`);
      return fetch(input, init);
    };

    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider, fetch: recordingFetch });
    await expect(new Client({ name: 'agent', version: '1.0.0' }).connect(transport)).rejects.toThrow(/unauthorized/i);
    expect(requests.slice(0, 4)).toEqual(['POST /mcp', 'GET /.well-known/oauth-protected-resource/mcp', 'GET /.well-known/oauth-authorization-server', 'POST /oauth/register']);
    const url = provider.authorizationUrl!;
    expect(url.origin + url.pathname).toBe(`${service.baseUrl}/oauth/authorize`);
    expect(url.searchParams.get('code_challenge_method')).toBe('S256');
    expect(url.searchParams.get('scope')).toBe('videos:read videos:write');
    // The SDK asks for the resource named by the metadata /mcp's challenge points at: the token is for /mcp only.
    expect(url.searchParams.get('resource')).toBe(`${service.baseUrl}/mcp`);

    await transport.finishAuth(await approve(url, 'oauth-agent@example.com'));
    expect(requests.at(-1)).toBe('POST /oauth/token');
    expect(provider.tokens()?.access_token).toMatch(/^pso_at_/);

    const client = await connect({ authProvider: provider });
    const user = await service.context.services.users.resolve('oauth-agent@example.com');
    expect((await call(client, 'get_account')).structuredContent).toMatchObject({ user_id: user.id, scopes: ['videos:read', 'videos:write'] });
    expect((await fetch(`${service.baseUrl}/v1/me`, { headers: { Authorization: `Bearer ${provider.tokens()!.access_token}` } })).status).toBe(401);

    // A token granted only videos:read can read but not spend.
    const readOnly = new TestOAuthProvider();
    expect(await auth(readOnly, { serverUrl: mcpUrl, scope: 'videos:read' })).toBe('REDIRECT');
    const code = await approve(readOnly.authorizationUrl!, 'oauth-agent@example.com');
    expect(await auth(readOnly, { serverUrl: mcpUrl, authorizationCode: code })).toBe('AUTHORIZED');
    expect(readOnly.tokens()?.scope).toBe('videos:read');
    const reader = await connect({ authProvider: readOnly });
    expect((await call(reader, 'get_credits')).isError).toBeFalsy();
    expect(errorOf(await call(reader, 'create_video', { template_id: '1', image_url: imageHost.url('/pet.png') })).code).toBe('forbidden');
  });
});
