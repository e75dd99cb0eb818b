import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { extname, join, resolve } from 'node:path';
import express, { Router, type Request, type RequestHandler, type Response } from 'express';
import type { AppContext } from '../runtime/app-context.ts';

/** Where `npm run build:dashboard` writes the web app (dashboard/dist of the repository), unless DASHBOARD_DIR says otherwise. */
const DEFAULT_DASHBOARD_DIR = resolve(import.meta.dirname, '..', '..', '..', 'dashboard', 'dist');

/**
 * The web app's own paths besides `/`: every GET below /app answers its index.html and the app's router
 * picks the page. No API path starts with /app (or /assets), so neither side can shadow the other.
 */
const APP_PATH_PREFIX = '/app';
/**
 * Pages of the app outside /app: where Stripe sends people back (the addresses BillingService gives Checkout and
 * the billing portal, docs/web-app.md). A fixed list; none is an API path.
 */
const APP_RETURN_PAGES = ['/account', '/checkout/success', '/checkout/cancel'];
/**
 * The OAuth authorization page (the authorization server metadata's authorization_endpoint): a page of the app,
 * which checks the request and sends the decision through /oauth/authorization-request and
 * /oauth/authorization-decision (oauth.routes.ts).
 */
const AUTHORIZATION_PAGE = '/oauth/authorize';
/**
 * The unsubscribe link of every lifecycle email. A browser gets the app's page, which opts the holder out
 * with POST /email/unsubscribe and says so; API and mail clients get the JSON endpoint (email.routes.ts).
 */
const UNSUBSCRIBE_PAGE = '/email/unsubscribe';
const ASSETS_PATH = '/assets';
/** The placeholder index.html carries, replaced by the runtime settings below when the API serves it. */
const CONFIG_PLACEHOLDER = '<meta name="petsing-config" content="{}">';

/** What the app reads from its index.html at start: where the API is and how people sign in. */
type SiteSettings = {
  api_base_url: string;
  ws_url: string;
  /** `none`: no identity provider, and the development sign-in is off because HOST is not a loopback address. */
  sign_in: { kind: 'development' } | { kind: 'oidc'; authority: string; client_id: string } | { kind: 'none' };
};

const escapeAttribute = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);

const origin = (url: string) => new URL(url).origin;

/**
 * The page's Content-Security-Policy: scripts and styles only from the app's own files (no inline script,
 * no eval), API and websocket calls to the configured addresses (and the identity provider when one is
 * configured), photos and videos from the API and from HTTPS object stores (presigned download links),
 * never framed.
 */
function siteContentSecurityPolicy(context: AppContext): string {
  const { baseUrl, wsUrl } = context.config;
  const oidc = context.config.externalIdentityProvider;
  const connect = new Set(["'self'", origin(baseUrl), origin(wsUrl)]);
  if (oidc) connect.add(origin(oidc.issuer));
  const media = ["'self'", origin(baseUrl), 'blob:', 'data:', 'https:'].join(' ');
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src ${media}`,
    `media-src ${media}`,
    `connect-src ${[...connect].join(' ')}`,
    "font-src 'self'",
    "object-src 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function siteSettings(context: AppContext): SiteSettings {
  const oidc = context.config.externalIdentityProvider;
  return {
    api_base_url: context.config.baseUrl,
    ws_url: context.config.wsUrl,
    // An ID token's audience is the client it was issued to, so OIDC_AUDIENCE is the app's client id.
    sign_in: oidc ? { kind: 'oidc', authority: oidc.issuer, client_id: oidc.audience } : context.config.devSignIn ? { kind: 'development' } : { kind: 'none' },
  };
}

/** Built files are named by their content: cached for a year, never revalidated. */
const ASSET_CACHING = { immutable: true, maxAge: '365d' } as const;
/** A built file's name: the build writes the assets folder flat (no folders, nothing to climb out of). */
const ASSET_NAME = /^\/[\w.-]+$/;
/** The precompressed copies the build writes beside each asset (dashboard/vite.config.ts), by content coding. */
const PRECOMPRESSED = { br: '.br', gzip: '.gz' } as const;

/**
 * Serves an asset's precompressed copy (brotli, else gzip, as the request accepts; compressed once at build time
 * at the best level) with the asset's own type. Without an accepted copy the plain file follows (express.static).
 */
function precompressedAssets(assets: string): RequestHandler {
  return (req, res, next) => {
    res.vary('Accept-Encoding');
    // Brotli whenever it is accepted at all: browsers list gzip first, yet brotli is the smaller.
    const encoding = req.acceptsEncodings('br') ? 'br' : req.acceptsEncodings('gzip') ? 'gzip' : undefined;
    if ((req.method !== 'GET' && req.method !== 'HEAD') || !encoding || !ASSET_NAME.test(req.path)) return next();
    const copy = join(assets, `${req.path}${PRECOMPRESSED[encoding]}`);
    if (!existsSync(copy)) return next();
    res.type(extname(req.path)).set('Content-Encoding', encoding);
    res.sendFile(copy, { ...ASSET_CACHING, dotfiles: 'deny' }, (error) => {
      // A client that hung up mid-file is no error to report; one before any byte is (a copy that went missing).
      if (error && !res.headersSent) next(error);
    });
  };
}

/** Browsers ask for HTML first; API clients for JSON, for anything (`*∕*`) or send no Accept at all. */
const prefersHtml = (req: Request) => req.accepts(['application/json', 'text/html']) === 'text/html';

/**
 * The web app, served by the API process from the built files (DASHBOARD_DIR, default dashboard/dist):
 *
 * - `GET /` answers index.html to a request that prefers `text/html` over JSON (a browser) and passes every
 *   other one on to the JSON service index (`Vary: Accept` on both); `GET /email/unsubscribe` likewise;
 * - `GET /app` and everything below it, Stripe's return pages (/account, /checkout/success,
 *   /checkout/cancel) and the OAuth authorization page (/oauth/authorize) answer index.html (the app's
 *   client-side routes);
 * - `GET /assets/*` serves the hashed, content-addressed build output, cached for a year as immutable.
 *
 * index.html is sent `Cache-Control: no-cache` with the Content-Security-Policy above and the runtime
 * settings in a meta tag. When the app was not built, nothing here answers: `/` stays the JSON index and
 * /app and /assets are 404 like any unknown path.
 */
export function siteRoutes(context: AppContext): Router {
  const dir = resolve(context.config.env.DASHBOARD_DIR ?? DEFAULT_DASHBOARD_DIR);
  const policy = siteContentSecurityPolicy(context);
  const settings = CONFIG_PLACEHOLDER.replace('{}', escapeAttribute(JSON.stringify(siteSettings(context))));
  const router = Router();

  /** Read at every page load (it is small), so a rebuild is served without a restart; undefined when not built. */
  const indexHtml = async (): Promise<string | undefined> => {
    try {
      return (await readFile(join(dir, 'index.html'), 'utf8')).replace(CONFIG_PLACEHOLDER, settings);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  };
  const sendIndex = async (res: Response): Promise<boolean> => {
    const html = await indexHtml();
    if (html === undefined) return false;
    res.set({
      'Content-Type': 'text/html; charset=utf-8',
      'Cache-Control': 'no-cache',
      'Content-Security-Policy': policy,
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'strict-origin-when-cross-origin',
    });
    res.send(html);
    return true;
  };

  router.get(['/', UNSUBSCRIBE_PAGE], async (req, res, next) => {
    res.vary('Accept');
    if (prefersHtml(req) && (await sendIndex(res))) return;
    next();
  });
  router.get([APP_PATH_PREFIX, `${APP_PATH_PREFIX}/*splat`, ...APP_RETURN_PAGES, AUTHORIZATION_PAGE], async (_req, res, next) => {
    if (!(await sendIndex(res))) next();
  });
  const assets = join(dir, 'assets');
  router.use(ASSETS_PATH, precompressedAssets(assets));
  router.use(ASSETS_PATH, express.static(assets, { ...ASSET_CACHING, index: false, redirect: false, fallthrough: true, dotfiles: 'ignore' }));
  return router;
}
