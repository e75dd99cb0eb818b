import { execFile } from 'node:child_process';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { errorHandler } from '../src/http/errors.ts';
import { requestLogging } from '../src/http/request-logging.ts';
import { createLogger } from '../src/logging/logger.ts';
import { captureLines } from '../../test/support/log-capture.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';
import { json } from '../../test/support/http.ts';

const run = promisify(execFile);

describe('service basics', () => {
  let service: TestService;
  const url = (path: string) => `${service.baseUrl}${path}`;

  beforeAll(async () => {
    service = await startTestService();
    await service.context.services.templates.seed(service.context.logger);
  });
  afterAll(() => service.stop());

  it('GET /health answers the literal OK as text/html', async () => {
    const response = await fetch(url('/health'));
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await response.text()).toBe('OK');
  });

  it('GET / lists the specification, documentation, websocket and every credential-free endpoint', async () => {
    const body = await json(fetch(url('/')));
    expect(body.specification_url).toBe(url('/openapi.json'));
    expect(body.documentation_url).toBe(url('/docs'));
    expect(body.websocket_url).toBe(`${service.baseUrl.replace('http', 'ws')}/ws`);
    expect(body.public_endpoints).toEqual(
      expect.arrayContaining(['GET /', 'GET /openapi.json', 'GET /health', 'GET /templates', 'GET /subscription/pricing', 'GET /versions', 'GET /email/unsubscribe', 'POST /email/unsubscribe']),
    );
    const docs = await fetch(body.documentation_url);
    expect(docs.status).toBe(200);
  });

  it('GET /versions is the VersionsDocument of the spec', async () => {
    const body = await json(fetch(url('/versions')));
    expect(body.current).toBe('v1');
    expect(body.versions).toEqual([
      { version: 'v1', status: 'current', base_url: url('/v1'), released: '2026-08-22', deprecated_on: null, sunset_on: null },
    ]);
    expect(body.policy.scheme).toBe('url_path');
    expect(body.policy.notice_period_days).toBe(180);
    expect(body.policy.signals.length).toBeGreaterThan(0);
    expect(body.policy.breaking_changes).toContain('removing an endpoint');
    expect(body.policy.non_breaking_changes).toContain('adding a response field');
  });

  it('GET /templates lists the seeded templates oldest id first, cacheable for an hour', async () => {
    const response = await fetch(url('/templates'));
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    const templates = (await json(response)) as { id: string; preview_image_url: string; audio_url: string; duration_seconds: number }[];
    expect(templates.length).toBeGreaterThanOrEqual(5);
    expect(templates.map((t) => t.id)).toEqual(templates.map((_, i) => String(i + 1)));
    for (const template of templates) {
      expect(template.duration_seconds).toBeGreaterThanOrEqual(10);
      expect(template.duration_seconds).toBeLessThanOrEqual(20);
    }
    const image = await fetch(templates[0]!.preview_image_url);
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toMatch(/^image\//);
    const audio = await fetch(templates[0]!.audio_url);
    expect(audio.headers.get('content-type')).toBe('audio/mpeg');
    expect((await audio.arrayBuffer()).byteLength).toBeGreaterThan(10_000);
  });

  it('seeds templates idempotently', async () => {
    const again = await service.context.services.templates.seed(service.context.logger);
    expect(again.created).toBe(0);
    const rows = await service.database.db.selectFrom('templates').select('id').execute();
    expect(rows.length).toBe(again.kept);
  });

  it('answers unknown routes with 404 JSON in the shared shape', async () => {
    const response = await fetch(url('/no/such/thing'));
    expect(response.status).toBe(404);
    const body = await json(response);
    expect(body).toMatchObject({ error: { code: 'not_found', status: 404 }, message: body.error.message });
    expect(body.error.hint).toEqual(expect.any(String));
    expect(body.error.documentation_url).toBe(url('/docs/errors#not_found'));
    const docs = await (await fetch(body.error.documentation_url)).text();
    expect(docs).toContain('id="not_found"');
  });

  it('answers malformed JSON with 400 and oversized bodies with 413, both JSON', async () => {
    const malformed = await fetch(url('/v1/me'), { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(malformed.status).toBe(400);
    expect((await json(malformed)).error.code).toBe('malformed_json');
    const oversized = await fetch(url('/v1/me'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ filler: 'x'.repeat(200_000) }),
    });
    expect(oversized.status).toBe(413);
    expect((await json(oversized)).error.code).toBe('payload_too_large');
  });

  it('hides thrown errors behind a 500 without a stack trace', async () => {
    const { lines, sink } = captureLines();
    const logger = createLogger('info', 'petsing', sink);
    const app = express();
    app.use(requestLogging(logger));
    app.get('/boom', () => {
      throw new Error('secret internals at /srv/app.ts:12');
    });
    app.use(errorHandler('http://petsing.test', logger));
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/boom`);
    const text = await response.text();
    server.close();
    expect(response.status).toBe(500);
    expect(JSON.parse(text).error.code).toBe('internal_error');
    expect(text).not.toContain('secret internals');
    expect(text).not.toContain('.ts:');
    // ...while the log keeps the error under the request's id.
    const failure = lines.map((line) => JSON.parse(line) as { msg: string; err?: { message: string }; req?: { id: string } }).find((entry) => entry.msg === 'request failed');
    expect(failure?.err?.message).toBe('secret internals at /srv/app.ts:12');
    expect(failure?.req?.id).toBe(response.headers.get('x-request-id'));
  });

  it('returns a request id on every response and honours a sane incoming one', async () => {
    const generated = await fetch(url('/health'));
    expect(generated.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    const echoed = await fetch(url('/health'), { headers: { 'X-Request-Id': 'trace-abc-123456' } });
    expect(echoed.headers.get('x-request-id')).toBe('trace-abc-123456');
    const refused = await fetch(url('/health'), { headers: { 'X-Request-Id': 'bad id with spaces' } });
    expect(refused.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });

  it('serves an OpenAPI 3.1 document that @redocly/cli lints clean', async () => {
    const document = await json(fetch(url('/openapi.json')));
    expect(document.openapi).toBe('3.1.0');
    expect(document.paths['/v1/me'].get.operationId).toBe('getApiAccount');
    expect(document.components.schemas.ErrorDetail.required).toEqual(
      expect.arrayContaining(['code', 'message', 'status', 'hint', 'documentation_url', 'retryable']),
    );
    // Lint the document as a deployment with a public address would serve it.
    const published = JSON.parse(JSON.stringify(document).replaceAll(service.baseUrl, 'https://api.petsing.dev'));
    const directory = await mkdtemp(join(tmpdir(), 'openapi-'));
    const file = join(directory, 'openapi.json');
    await writeFile(file, JSON.stringify(published));
    const { stdout, stderr } = await run('npx', ['--no-install', 'redocly', 'lint', file, '--format=stylish'], { env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
    const output = stdout + stderr;
    expect(output).toContain('Your API description is valid');
    expect(output).not.toMatch(/^\s*\d+:\d+\s+(error|warning)\b/m);
  }, 60_000);
});
