import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestAccount, signInWebUser } from '../../test/support/accounts.ts';
import { json, type Json } from '../../test/support/http.ts';
import { expectDocumentedResponses } from '../../test/support/openapi.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

const REDIRECT_URI = 'http://127.0.0.1:53682/callback';

/** Issue 14: every bad input is a 4xx, and /openapi.json is a contract third-party tools accept. */
describe('bad input and the OpenAPI contract', () => {
  let service: TestService;
  let apiKey: string;
  const url = (path: string) => `${service.baseUrl}${path}`;

  beforeAll(async () => {
    service = await startTestService();
    apiKey = (await createTestAccount(service.context, 'bad-input@example.com', 1)).readWrite;
  });
  afterAll(() => service.stop());

  const expectErrorBody = async (response: Response, status: number, code: string) => {
    expect(response.status).toBe(status);
    const body = await json(response);
    expect(body).toMatchObject({ error: { code, status }, message: body.error.message });
    expect(body.error.hint).toEqual(expect.any(String));
    expect(body.error.hint.length).toBeGreaterThan(0);
    return body;
  };

  describe('malformed percent-encoding in a path', () => {
    it.each([
      ['/v1/videos/%ZZ', true],
      ['/v1/videos/%E0%A4%A', true],
      ['/media/audio/%ZZ.mp3', false],
      ['/media/templates/%ZZ/audio', false],
      ['/media/voices/%ZZ', false],
      ['/files/%ZZ?expires=1&signature=x', false],
    ])('%s answers 400 invalid_path, not 500', async (path, withKey) => {
      const response = await fetch(url(path), withKey ? { headers: { Authorization: `Bearer ${apiKey}` } } : {});
      const body = await expectErrorBody(response, 400, 'invalid_path');
      expect(body.error.documentation_url).toBe(url('/docs/errors#invalid_path'));
    });

    it('documents the 400 on every operation that has a path parameter', async () => {
      const document = await json(fetch(url('/openapi.json')));
      for (const [path, item] of Object.entries(document.paths) as [string, Json][]) {
        if (!path.includes('{')) continue;
        for (const operation of Object.values(item) as Json[]) {
          expect(operation.responses['400'], `${operation.operationId} documents 400`).toBeDefined();
        }
      }
      const docs = await (await fetch(url('/docs/errors'))).text();
      expect(docs).toContain('id="invalid_path"');
    });
  });

  describe('NUL bytes and invalid Unicode in text fields', () => {
    const oauthJson = (path: string, body: unknown) =>
      fetch(url(path), { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const expectOAuthError = async (response: Response, error: string) => {
      expect(response.status).toBe(400);
      const body = await json(response);
      expect(body).toMatchObject({ error, error_description: expect.any(String) });
      return body;
    };

    it.each([
      ['a NUL byte', 'Pet\u0000Client'],
      ['a lone surrogate', 'Pet\uD800Client'],
      ['a bidirectional override', 'Pet\u202EtneilC'],
      ['a bidirectional isolate', 'Pet\u2066Client\u2069'],
    ])('/oauth/register refuses client_name with %s as invalid_client_metadata', async (_what, name) => {
      const body = await expectOAuthError(await oauthJson('/oauth/register', { redirect_uris: [REDIRECT_URI], client_name: name }), 'invalid_client_metadata');
      expect(body.error_description).toContain('client_name');
    });

    it('/oauth/register still accepts an ordinary name with accents and emoji', async () => {
      const response = await oauthJson('/oauth/register', { redirect_uris: [REDIRECT_URI], client_name: 'Café 🐶 client' });
      expect(response.status).toBe(201);
      expect((await json(response)).client_name).toBe('Café 🐶 client');
    });

    it.each([
      ['form', 'application/x-www-form-urlencoded'],
      ['JSON', 'application/json'],
    ])('/oauth/token refuses a NUL byte in client_id (%s) as invalid_request', async (_what, type) => {
      const fields = { grant_type: 'authorization_code', client_id: 'psc_\u0000x', code: 'c', redirect_uri: REDIRECT_URI };
      const response = await fetch(url('/oauth/token'), {
        method: 'POST',
        headers: { 'content-type': type },
        body: type === 'application/json' ? JSON.stringify(fields) : new URLSearchParams(fields),
      });
      const body = await expectOAuthError(response, 'invalid_request');
      expect(body.error_description).toContain('client_id');
    });

    it('the authorization page\'s endpoints refuse a NUL byte in client_id, shown to the person (no redirect)', async () => {
      const query = new URLSearchParams({ response_type: 'code', client_id: 'psc_\u0000x', redirect_uri: REDIRECT_URI });
      const get = await fetch(url(`/oauth/authorization-request?${query}`), { redirect: 'manual' });
      const { token } = await signInWebUser(service, 'bad-input-oauth@example.com');
      const post = await fetch(url('/oauth/authorization-decision'), {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ ...Object.fromEntries(query), decision: 'allow' }),
        redirect: 'manual',
      });
      for (const response of [get, post]) {
        expect(response.status).toBe(400);
        const body = await json(response);
        expect(body).toMatchObject({ error: 'invalid_request', error_description: expect.stringContaining('client_id') });
        expect(body.redirect_to).toBeUndefined();
      }
    });

    it('zod-validated endpoints refuse NUL bytes and lone surrogates in any string with 400 invalid_request', async () => {
      for (const text of ['hello\u0000', 'hello\uDC00']) {
        const response = await fetch(url('/v1/videos'), {
          method: 'POST',
          headers: { Authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ template_id: text, image_url: 'https://example.com/pet.png' }),
        });
        const body = await expectErrorBody(response, 400, 'invalid_request');
        expect(body.error.message).toContain('template_id');
      }
    });

    it('multipart text fields follow the same rule (web create)', async () => {
      const { token } = await signInWebUser(service, 'bad-input-web@example.com');
      const form = new FormData();
      form.set('template_id', '1\u0000');
      const response = await fetch(url('/create-with-template'), { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: form });
      const body = await expectErrorBody(response, 400, 'invalid_request');
      expect(body.error.message).toContain('template_id');
      expect(body.error.message).toContain('NUL');
    });
  });

  describe('bad file names under /media', () => {
    it('answer 400 invalid_request, documented as such on each operation', async () => {
      const cases: [string, string, number][] = [
        ['/media/audio/not-an-id.mp3', 'getHostedAudio', 400],
        ['/media/audio/00000000-0000-4000-8000-000000000000.wav', 'getHostedAudio', 400],
        ['/media/voices/-dash-first.mp3', 'getVoiceSample', 400],
        ['/media/voices/no-extension', 'getVoiceSample', 400],
        ['/media/templates/1/poster', 'getTemplateMedia', 400],
        ['/media/templates/999/audio', 'getTemplateMedia', 404],
        ['/media/templates/not-a-number/audio', 'getTemplateMedia', 404],
      ];
      const recorded = [];
      for (const [path, operation, status] of cases) {
        const response = await fetch(url(path));
        const body = await expectErrorBody(response, status, status === 400 ? 'invalid_request' : 'not_found');
        recorded.push({ operation, status, body });
      }
      await expectDocumentedResponses(service.baseUrl, recorded);

      const document = await json(fetch(url('/openapi.json')));
      for (const path of ['/media/audio/{file}', '/media/voices/{file}', '/media/templates/{id}/{asset}']) {
        expect(document.paths[path].get.responses['400'].description, path).toContain('Invalid request');
      }
    });
  });

  describe('unsupported methods on existing paths', () => {
    it.each([
      ['PUT', '/v1/videos', 'GET, HEAD, POST'],
      ['DELETE', '/v1/videos', 'GET, HEAD, POST'],
      ['POST', '/v1/videos/00000000-0000-4000-8000-000000000000', 'DELETE, GET, HEAD'],
      ['PATCH', '/v1/me', 'GET, HEAD'],
      ['DELETE', '/templates', 'GET, HEAD'],
      ['GET', '/oauth/token', 'POST'],
    ])('%s %s answers 405 with Allow: %s', async (method, path, allow) => {
      const response = await fetch(url(path), { method, headers: { Authorization: `Bearer ${apiKey}` } });
      const body = await expectErrorBody(response, 405, 'method_not_allowed');
      expect(response.headers.get('allow')).toBe(allow);
      expect(body.error.message).toContain(method);
    });

    it('an unknown path is still 404', async () => {
      await expectErrorBody(await fetch(url('/v1/no-such-thing'), { method: 'PUT', headers: { Authorization: `Bearer ${apiKey}` } }), 404, 'not_found');
      await expectErrorBody(await fetch(url('/no/such/thing'), { method: 'DELETE' }), 404, 'not_found');
    });
  });

  describe('the OpenAPI document', () => {
    it('has patterns that compile as ECMA-262 regular expressions with the u flag', async () => {
      const document = await json(fetch(url('/openapi.json')));
      const patterns: string[] = [];
      const collect = (node: unknown) => {
        if (Array.isArray(node)) node.forEach(collect);
        else if (node && typeof node === 'object') {
          for (const [key, value] of Object.entries(node)) {
            if (key === 'pattern' && typeof value === 'string') patterns.push(value);
            else collect(value);
          }
        }
      };
      collect(document);
      expect(patterns.length).toBeGreaterThan(0);
      for (const pattern of patterns) {
        expect(() => new RegExp(pattern, 'u'), pattern).not.toThrow();
        expect(pattern, 'no JavaScript flags leaked into the pattern').not.toMatch(/\/[dgimsuvy]+$/);
      }
    });

    it('matches a hosted-audio URL the service hands out with the /media/audio/{file} parameter pattern', async () => {
      const user = await service.context.services.users.create({ email: 'hosted-audio@example.com' });
      const directory = await mkdtemp(join(tmpdir(), 'petsing-bad-input-'));
      const file = join(directory, 'speech.mp3');
      await writeFile(file, Buffer.alloc(1024));
      const link = await service.context.services.hostedAudio.store(user.id, 'tts', file, 3);
      const document = await json(fetch(url('/openapi.json')));
      const operation = document.paths['/media/audio/{file}'].get;
      const parameter = operation.parameters.find((p: Json) => p.name === 'file' && p.in === 'path');
      const pattern = new RegExp(parameter.schema.pattern, 'u');
      const name = link.url.slice(url('/media/audio/').length);
      expect(name).toMatch(pattern);
      expect(`${link.id.toUpperCase()}.mp3`).toMatch(pattern);
      expect('not-an-id.mp3').not.toMatch(pattern);
      expect((await fetch(link.url)).status).toBe(200);
    });

    it('declares every tag an operation uses, with a description', async () => {
      const document = await json(fetch(url('/openapi.json')));
      const declared = new Map((document.tags as Json[]).map((tag) => [tag.name, tag.description]));
      const used = new Set<string>();
      for (const item of Object.values(document.paths) as Json[]) for (const operation of Object.values(item) as Json[]) for (const tag of operation.tags ?? []) used.add(tag);
      expect(used).toContain('oauth');
      expect(used).toContain('mcp');
      for (const tag of used) expect(declared.get(tag), `tag ${tag} is declared`).toEqual(expect.any(String));
    });
  });
});
