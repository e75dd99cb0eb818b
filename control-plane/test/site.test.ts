import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { get } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signInWebUser } from '../../test/support/accounts.ts';
import { json } from '../../test/support/http.ts';
import { startTestService, type TestService } from '../../test/support/test-service.ts';

/** What Chromium sends when it navigates to a page. */
const BROWSER_ACCEPT = 'text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8';
const IMMUTABLE = 'public, max-age=31536000, immutable';

/** A built web app as `vite build` lays it out: index.html with the settings placeholder, hashed assets. */
async function builtApp(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'petsing-site-'));
  await mkdir(join(dir, 'assets'));
  await writeFile(
    join(dir, 'index.html'),
    '<!doctype html><html><head><meta name="petsing-config" content="{}"><script type="module" crossorigin src="/assets/index-Ab12Cd34.js"></script></head><body><div id="root"></div></body></html>',
  );
  await writeFile(join(dir, 'assets', 'index-Ab12Cd34.js'), APP_SCRIPT);
  // The build's precompressed copies (dashboard/vite.config.ts).
  await writeFile(join(dir, 'assets', 'index-Ab12Cd34.js.br'), brotliCompressSync(APP_SCRIPT));
  await writeFile(join(dir, 'assets', 'index-Ab12Cd34.js.gz'), gzipSync(APP_SCRIPT));
  return dir;
}

/** The built app's script: more than the 1 KB below which nothing is compressed. */
const APP_SCRIPT = `console.log("app");\n${'// padding so the script is worth compressing\n'.repeat(40)}`;

/** A GET with exactly these headers, answered as raw bytes (fetch would ask for and undo compression itself). */
const rawGet = (url: string, headers: Record<string, string>) =>
  new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
    get(url, { headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });

/** A GET that sends no Accept header at all (fetch always adds one). */
const getWithoutAccept = (url: string) =>
  new Promise<{ status: number; contentType: string | undefined; body: string }>((resolve, reject) => {
    get(url, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, contentType: response.headers['content-type'], body }));
    }).on('error', reject);
  });

const settingsOf = (html: string) => {
  const content = /<meta name="petsing-config" content="([^"]*)">/.exec(html)?.[1];
  expect(content, 'the settings meta tag').toBeDefined();
  return JSON.parse(content!.replaceAll('&quot;', '"').replaceAll('&amp;', '&').replaceAll('&#39;', "'").replaceAll('&lt;', '<').replaceAll('&gt;', '>'));
};

describe('the web app served by the API (built)', () => {
  let service: TestService;
  let appDir: string;
  const url = (path: string) => `${service.baseUrl}${path}`;

  beforeAll(async () => {
    appDir = await builtApp();
    service = await startTestService({ env: { DASHBOARD_DIR: appDir } });
  });
  afterAll(async () => {
    await service?.stop();
    await rm(appDir, { recursive: true, force: true });
  });

  it('GET / answers a browser (text/html preferred) with index.html, uncached, under a CSP without inline scripts', async () => {
    const response = await fetch(url('/'), { headers: { Accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(response.headers.get('cache-control')).toBe('no-cache');
    expect(response.headers.get('vary')).toMatch(/Accept/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain(`connect-src 'self' ${service.baseUrl} ${service.baseUrl.replace('http', 'ws')}`);
    expect(csp).not.toContain('unsafe-inline');
    expect(csp).not.toContain('unsafe-eval');
    const html = await response.text();
    expect(html).toContain('<div id="root"></div>');
    expect(settingsOf(html)).toEqual({ api_base_url: service.baseUrl, ws_url: `${service.baseUrl.replace('http', 'ws')}/ws`, sign_in: { kind: 'development' } });
  });

  it('GET / without an Accept header stays the JSON service index', async () => {
    const response = await getWithoutAccept(url('/'));
    expect(response.status).toBe(200);
    expect(response.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(response.body).specification_url).toBe(url('/openapi.json'));
  });

  it.each([
    ['*/*', '*/*'],
    ['application/json', 'application/json'],
    ['JSON preferred over HTML', 'text/html;q=0.5, application/json'],
    ['HTML and JSON equally', 'application/json, text/html'],
  ])('GET / with %s stays the JSON service index', async (_name, accept) => {
    const response = await fetch(url('/'), { headers: { Accept: accept } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('vary')).toMatch(/Accept/);
    const body = await json(response);
    expect(body.specification_url).toBe(url('/openapi.json'));
    expect(body.public_endpoints).toContain('GET /');
  });

  it('HEAD / from a browser answers the page headers without a body', async () => {
    const response = await fetch(url('/'), { method: 'HEAD', headers: { Accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await response.text()).toBe('');
  });

  it.each(['/app', '/app/', '/app/new', '/app/sign-in', '/app/videos/4f1c2d9e-0b7a-4d53-9a43-2f0e8c1b6a55', '/account', '/checkout/success?session_id=cs_test_1', '/checkout/cancel', '/oauth/authorize?response_type=code&client_id=psc_x'])('GET %s (a client-side route) answers index.html whatever Accept says', async (path) => {
    for (const accept of [BROWSER_ACCEPT, '*/*']) {
      const response = await fetch(url(path), { headers: { Accept: accept } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(await response.text()).toContain('<div id="root"></div>');
    }
  });

  it('GET /email/unsubscribe: a browser gets the page (which opts out itself), any other client the JSON opt-out', async () => {
    const { users, email } = service.context.services;
    const user = await signInWebUser(service, 'page-unsubscribe@example.com');
    const link = new URL(email.unsubscribeUrl(user.id));
    const page = await fetch(url(link.pathname + link.search), { headers: { Accept: BROWSER_ACCEPT } });
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(page.headers.get('vary')).toMatch(/Accept/);
    expect(page.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(await page.text()).toContain('<div id="root"></div>');
    // Only the page's own POST opts out, so a scanner that fetches the link as a browser but runs no script changes nothing.
    expect((await users.findById(user.id))?.email_opt_out).toBe(false);

    for (const accept of ['application/json', '*/*']) {
      const answer = await fetch(url(link.pathname + link.search), { headers: { Accept: accept } });
      expect(answer.status).toBe(200);
      expect(answer.headers.get('vary')).toMatch(/Accept/);
      expect(await json(answer)).toMatchObject({ unsubscribed: true, email: 'p***@example.com' });
    }
    expect((await users.findById(user.id))?.email_opt_out).toBe(true);
  });

  it('hashed assets are immutable for a year; a missing one is the JSON 404', async () => {
    const asset = await fetch(url('/assets/index-Ab12Cd34.js'));
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe(IMMUTABLE);
    expect(asset.headers.get('content-type')).toMatch(/javascript/);
    expect(await asset.text()).toContain('console.log("app")');

    const missing = await fetch(url('/assets/index-00000000.js'), { headers: { Accept: BROWSER_ACCEPT } });
    expect(missing.status).toBe(404);
    expect((await json(missing)).error.code).toBe('not_found');
  });

  it('sends the built files precompressed: brotli when accepted, else gzip, else plain, each with the asset\'s type', async () => {
    const brotli = await rawGet(url('/assets/index-Ab12Cd34.js'), { 'Accept-Encoding': 'gzip, deflate, br' });
    expect(brotli.status).toBe(200);
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.headers['content-type']).toMatch(/javascript/);
    expect(brotli.headers['cache-control']).toBe(IMMUTABLE);
    expect(brotli.headers.vary).toMatch(/Accept-Encoding/);
    expect(brotliDecompressSync(brotli.body).toString()).toBe(APP_SCRIPT);
    const gzip = await rawGet(url('/assets/index-Ab12Cd34.js'), { 'Accept-Encoding': 'gzip, deflate' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).toString()).toBe(APP_SCRIPT);
    const plain = await rawGet(url('/assets/index-Ab12Cd34.js'), { 'Accept-Encoding': 'identity' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.toString()).toBe(APP_SCRIPT);
    // A client that refuses brotli (q=0) gets gzip.
    expect((await rawGet(url('/assets/index-Ab12Cd34.js'), { 'Accept-Encoding': 'br;q=0, gzip' })).headers['content-encoding']).toBe('gzip');
  });

  it('compresses what the API answers (the page, JSON) as the client accepts, and a small answer not at all', async () => {
    const document = await rawGet(url('/openapi.json'), { 'Accept-Encoding': 'br' });
    expect(document.headers['content-encoding']).toBe('br');
    expect(document.headers.vary).toMatch(/Accept-Encoding/);
    const text = brotliDecompressSync(document.body).toString();
    expect(JSON.parse(text).openapi).toMatch(/^3\./);
    expect(document.body.length, 'brotli makes the OpenAPI document much smaller').toBeLessThan(text.length / 4);
    const gzip = await rawGet(url('/openapi.json'), { 'Accept-Encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(JSON.parse(gunzipSync(gzip.body).toString()).openapi).toMatch(/^3\./);
    expect((await rawGet(url('/openapi.json'), {})).headers['content-encoding']).toBeUndefined();
    // index.html, with its settings, is compressed on the way out like any HTML.
    const page = await rawGet(url('/app'), { Accept: BROWSER_ACCEPT, 'Accept-Encoding': 'br' });
    expect(page.status).toBe(200);
    expect(page.headers['content-encoding'] ?? 'identity').toMatch(/^(br|identity)$/);
    // Below compression's threshold (1 KB) an answer goes as it is.
    const health = await rawGet(url('/health'), { 'Accept-Encoding': 'br' });
    expect(health.headers['content-encoding']).toBeUndefined();
    expect(health.body.toString()).toBe('OK');
  });

  it('API paths answer JSON to browsers too, and paths that only look like the app are 404', async () => {
    const templates = await fetch(url('/templates'), { headers: { Accept: BROWSER_ACCEPT } });
    expect(templates.status).toBe(200);
    expect(templates.headers.get('content-type')).toMatch(/^application\/json/);
    for (const path of ['/apps', '/application', '/index.html', '/checkout', '/checkout/other', '/account/keys']) {
      const response = await fetch(url(path), { headers: { Accept: BROWSER_ACCEPT } });
      expect(response.status, path).toBe(404);
      expect((await json(response)).error.code).toBe('not_found');
    }
  });

  it('the development sign-in mints an ID token the web-app endpoints accept, and is in /openapi.json', async () => {
    const response = await fetch(url('/dev-identity/token'), {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ email: 'Site.Owner@Example.com' }),
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toBe('no-store');
    const body = await json(response);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 86400, email: 'site.owner@example.com' });
    const me = await json(fetch(url('/user/me'), { headers: { Authorization: `Bearer ${body.id_token}` } }));
    expect(me.email).toBe('site.owner@example.com');
    expect(me.free_credits).toBe(2);

    const invalid = await fetch(url('/dev-identity/token'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'not an address' }) });
    expect(invalid.status).toBe(400);
    expect((await json(invalid)).error.code).toBe('invalid_request');

    const document = await json(fetch(url('/openapi.json')));
    expect(document.paths['/dev-identity/token'].post.operationId).toBe('devSignIn');
  });
});

describe('the web app served by the API (not built)', () => {
  let service: TestService;
  const url = (path: string) => `${service.baseUrl}${path}`;

  beforeAll(async () => {
    service = await startTestService({ env: { DASHBOARD_DIR: join(tmpdir(), 'petsing-site-never-built') } });
  });
  afterAll(() => service?.stop());

  it('starts, and GET / answers the JSON service index even to a browser', async () => {
    const response = await fetch(url('/'), { headers: { Accept: BROWSER_ACCEPT } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect((await json(response)).specification_url).toBe(url('/openapi.json'));
  });

  it('/app and /assets are 404 like any unknown path', async () => {
    for (const path of ['/app', '/app/new', '/account', '/checkout/success', '/assets/index-Ab12Cd34.js']) {
      const response = await fetch(url(path), { headers: { Accept: BROWSER_ACCEPT } });
      expect(response.status, path).toBe(404);
      expect((await json(response)).error.code).toBe('not_found');
    }
  });
});

describe('the web app with an OpenID Connect provider configured', () => {
  let service: TestService;
  let appDir: string;
  const url = (path: string) => `${service.baseUrl}${path}`;
  const issuer = 'https://id.example.test/realms/petsing';

  beforeAll(async () => {
    appDir = await builtApp();
    service = await startTestService({
      env: { DASHBOARD_DIR: appDir, OIDC_ISSUER: issuer, OIDC_AUDIENCE: 'petsing-web', OIDC_JWKS_URL: `${issuer}/protocol/openid-connect/certs` },
    });
  });
  afterAll(async () => {
    await service?.stop();
    await rm(appDir, { recursive: true, force: true });
  });

  it('tells the app to sign in with the provider (authorization code + PKCE) and lets the page reach it', async () => {
    const response = await fetch(url('/app/sign-in'));
    expect(settingsOf(await response.text()).sign_in).toEqual({ kind: 'oidc', authority: issuer, client_id: 'petsing-web' });
    expect(response.headers.get('content-security-policy')).toMatch(/connect-src [^;]*https:\/\/id\.example\.test/);
  });

  it('has no development sign-in: the path is 404 and /openapi.json does not list it', async () => {
    const response = await fetch(url('/dev-identity/token'), { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify({ email: 'a@example.com' }) });
    expect(response.status).toBe(404);
    const document = await json(fetch(url('/openapi.json')));
    expect(document.paths['/dev-identity/token']).toBeUndefined();
  });
});
