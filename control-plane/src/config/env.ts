import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';
import { z } from 'zod';
import {
  booleanFlag,
  ConfigError,
  metricsPort,
  optionalString,
  parseEnvironment,
  portNumber,
  resolveBaseUrl,
  resolveDataDir,
  sharedEnvProblems,
  sharedEnvShape,
} from '@petsing/platform/config';

export { ConfigError };

/**
 * Every environment variable the control plane reads (the shared Temporal and storage ones included).
 * Unset means "embedded default": PGlite, a local object store and a Temporal dev server under DATA_DIR.
 * Documented in README.md and .env.example; keep the three in step.
 */
const controlPlaneEnvSchema = z.object({
  ...sharedEnvShape,
  /** The API's interface: this machine only unless told otherwise (containers set 0.0.0.0). */
  HOST: z.string().trim().min(1).default('127.0.0.1'),
  /** GET /metrics of `petsing api` and of the embedded `petsing start` (every part's, one registry), on METRICS_HOST, never on PORT; 0: none. */
  METRICS_PORT: metricsPort(9464),
  /** GET /metrics of `petsing worker control`; 0: none. A process running workers serves the Temporal SDK's metrics 100 above its port. */
  CONTROL_WORKER_METRICS_PORT: metricsPort(9465),
  WS_URL: z.url({ protocol: /^wss?$/ }).optional(),
  SITE_URL: z.url({ protocol: /^https?$/ }).optional(),
  /** Express "trust proxy": a hop count (e.g. 1 behind one load balancer) or a list of addresses/subnets. */
  TRUST_PROXY: z
    .string()
    .default('loopback')
    .transform((value) => (/^\d+$/.test(value) ? Number(value) : value)),

  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),

  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_DEV_UI_PORT: portNumber(8233),
  WORKFLOW_BUNDLE_PATH: optionalString,
  /** Whether a start queues the template previews its database lacks (the picker's example clips) on the render nodes. */
  TEMPLATE_PREVIEWS: booleanFlag(true),

  RATE_LIMIT_READS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  RATE_LIMIT_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  RATE_LIMIT_WEB_MEDIA_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Per client address: POST /oauth/token, /oauth/register and /dev-identity/token together. */
  RATE_LIMIT_SIGN_INS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(20),
  /** Redis for the rate limits' window counts (shared by every replica); unset counts in the database. */
  REDIS_URL: optionalString.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  /** How long a replica trusts a verified API key or OAuth token without asking the database: the bound on a revocation the replica missed. 0 turns the cache off. */
  CREDENTIAL_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  /** How long a replica keeps a video it read while the database announces no change of it: the bound on a change notification the replica missed. 0 turns the cache off. */
  VIDEO_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(3600).default(60),
  /** Browser origins, besides BASE_URL's and SITE_URL's, that may call /mcp (comma-separated). */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
    .pipe(z.array(z.url({ protocol: /^https?$/ }).transform((url) => new URL(url).origin))),
  /** Browser origins allowed cross-origin (comma-separated), or * for any (bearer tokens only, no cookies). */
  CORS_ALLOWED_ORIGINS: z
    .string()
    .default('*')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
    .pipe(z.union([z.tuple([z.literal('*')]), z.array(z.url({ protocol: /^https?$/ }).transform((url) => new URL(url).origin))])),
  /** The web app's built files (index.html and assets/); unset is dashboard/dist of the repository. Missing: the API serves no app. */
  DASHBOARD_DIR: optionalString,
  /** Development only: accept http:// image URLs (https is required otherwise). */
  ALLOW_HTTP_IMAGE_URLS: booleanFlag(false),
  /** Development only: every user URL may use http://, any port, and loopback or private hosts (metadata endpoints stay refused). */
  DEV_ALLOW_LOCAL_URLS: booleanFlag(false),
  /** How long POST /v1/images (and a web create that checks its photo) waits for a render node to find the face. */
  FACE_DETECTION_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(30_000),
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
  /** yt-dlp binary that turns a short-video page URL into its media URL (POST /social/extract-audio). */
  YTDLP_PATH: optionalString,
  /** Host names (exact, https only) whose video pages POST /social/extract-audio accepts; comma-separated. */
  SOCIAL_ALLOWED_HOSTS: z
    .string()
    .default('tiktok.com,www.tiktok.com,m.tiktok.com,vm.tiktok.com,vt.tiktok.com')
    .transform((list) => list.split(',').map((entry) => entry.trim().toLowerCase()).filter(Boolean))
    .pipe(z.array(z.string().regex(/^(?=.*[a-z])[a-z0-9-]+(\.[a-z0-9-]+)+$/, 'a host name such as www.tiktok.com (no scheme, port or IP address)')).min(1)),
  SOCIAL_MEDIA_MAX_BYTES: z.coerce.number().int().min(1024 * 1024).max(512 * 1024 * 1024).default(50 * 1024 * 1024),
  SOCIAL_RESOLVE_TIMEOUT_MS: z.coerce.number().int().min(1000).max(300_000).default(30_000),
  /** Speech for POST /tts: local espeak-ng voices, or an upstream API speaking the OpenAI speech protocol. */
  TTS_PROVIDER: z.enum(['espeak', 'http']).default('espeak'),
  TTS_API_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  TTS_API_KEY: optionalString,
  TTS_MODEL: z.string().trim().min(1).default('tts-1'),
  /** Upstream voice ids offered by GET /tts/voices (comma-separated); each is also a URL path and object-key segment. */
  TTS_VOICES: z
    .string()
    .default('alloy,echo,fable,onyx,nova,shimmer')
    .transform((list) => [...new Set(list.split(',').map((entry) => entry.trim()).filter(Boolean))])
    .pipe(z.array(z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'a voice id of letters, digits, ".", "_" or "-"')).min(1)),
  TTS_TIMEOUT_MS: z.coerce.number().int().min(100).max(300_000).default(30_000),
  ESPEAK_PATH: z.string().trim().min(1).default('espeak-ng'),
  /** The vocal separator's ONNX file (control worker); unset: control-plane/models/vocal-separator.onnx. It must be that file (its sha256 is checked at start). */
  SEPARATOR_MODEL_PATH: optionalString,
  /** Where the vocal separator runs, with the render node's rule for a CUDA that cannot load. */
  SEPARATOR_EXECUTION_PROVIDER: z.enum(['cpu', 'cuda']).default('cpu'),
  SEPARATOR_CUDA_FALLBACK: z.enum(['cpu', 'refuse']).default('refuse'),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(3600),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(365 * 24 * 3600).default(30 * 24 * 3600),
  OAUTH_CODE_TTL_SECONDS: z.coerce.number().int().min(1).max(600).default(60),

  OIDC_ISSUER: optionalString.pipe(z.url().optional()),
  OIDC_AUDIENCE: optionalString,
  OIDC_JWKS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** After fetching the provider's keys, how long a token with an unknown kid waits before they are fetched again. */
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),

  /** Lifecycle email: SMTP server as smtp://user:pass@host:587 or smtps://…:465; unset keeps messages in the outbox. */
  SMTP_URL: optionalString.pipe(z.url({ protocol: /^smtps?$/ }).optional()),
  /** Sender of lifecycle email, e.g. "petsing <hello@example.com>"; unset is no-reply@ the SITE_URL host. */
  EMAIL_FROM: optionalString,
  /** Pause between rounds of the email dispatcher (control worker). */
  EMAIL_DISPATCH_INTERVAL_MS: z.coerce.number().int().min(100).max(3_600_000).default(10_000),

  /** How often the control worker's schedule looks for paid videos without a running render. */
  RECONCILE_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(3600).default(60),
  /** How long a video may sit `pending`/`processing` unchanged before that check looks at it (the API starts its render within moments). */
  RECONCILE_GRACE_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(120),

  /**
   * Seconds between a failed webhook attempt and the next one, comma-separated; the first attempt is at once.
   * The default is Standard Webhooks' schedule (5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h): 8 attempts over about 27.6 hours.
   */
  WEBHOOK_RETRY_SCHEDULE_SECONDS: z
    .string()
    .default('5,300,1800,7200,18000,36000,36000')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean).map(Number))
    .pipe(z.array(z.number().int().min(1).max(7 * 24 * 3600)).max(20)),
  /** A webhook endpoint whose attempts have failed, without one success, for this long is disabled and its owner emailed. */
  WEBHOOK_DISABLE_AFTER_SECONDS: z.coerce.number().int().min(1).max(90 * 24 * 3600).default(5 * 24 * 3600),

  /** How often leftovers of crashed processes are swept (upload folders by the API; the object store by a control worker). */
  SWEEP_INTERVAL_SECONDS: z.coerce.number().int().min(1).max(7 * 24 * 3600).default(3600),
  /** What the sweep leaves alone: anything younger than this (a create in progress stores its files before its row commits). */
  SWEEP_MIN_AGE_SECONDS: z.coerce.number().int().min(1).max(30 * 24 * 3600).default(3600),

  /** Stripe payments: both keys, or neither (then checkout, portal and webhooks answer 503). */
  STRIPE_SECRET_KEY: optionalString,
  STRIPE_WEBHOOK_SECRET: optionalString,
  /** Where the Stripe SDK sends its requests (tests point it at a local server); unset is api.stripe.com. */
  STRIPE_API_BASE: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** Optional Stripe Price ids of the plans; unset, checkout prices them inline from the pricing table. */
  STRIPE_PRICE_WEEKLY: optionalString,
  STRIPE_PRICE_ANNUAL: optionalString,
  /** How long GET /subscription/status waits for Stripe before answering from the database. */
  STRIPE_STATUS_TIMEOUT_MS: z.coerce.number().int().min(100).max(30_000).default(2000),
  /** Request header carrying the caller's ISO country code, set by the edge (Cloudflare's by default). */
  COUNTRY_HEADER: z.string().regex(/^[A-Za-z0-9-]+$/, 'must be an HTTP header name').default('CF-IPCountry'),
});

export type ControlPlaneEnv = z.infer<typeof controlPlaneEnvSchema>;

export type StripeConfig = {
  secretKey: string;
  webhookSecret: string;
  apiBase: URL | undefined;
  statusTimeoutMs: number;
  /** Configured Stripe Price ids of the plans; a missing one is priced inline from the pricing table. */
  prices: { weekly: string | undefined; annual: string | undefined };
};

export interface ControlPlaneConfig {
  env: ControlPlaneEnv;
  dataDir: string;
  baseUrl: string;
  wsUrl: string;
  siteUrl: string;
  embedded: { database: boolean; temporal: boolean; objectStore: boolean };
  externalIdentityProvider: { issuer: string; audience: string; jwksUrl: string } | undefined;
  /**
   * Whether POST /dev-identity/token (an ID token for any email address, no password) is served: only without an
   * external identity provider, and only while HOST is a loopback address. On any other interface it is off and
   * the development identity provider's tokens come from `petsing dev-token` alone, which needs DATA_DIR.
   */
  devSignIn: boolean;
  /** Stripe settings; undefined when the keys are not set (payments answer 503 payments_not_configured). */
  stripe: StripeConfig | undefined;
  /** Origins browsers may call from: every one, or BASE_URL's, SITE_URL's and CORS_ALLOWED_ORIGINS. */
  corsOrigins: 'any' | ReadonlySet<string>;
  /** Origins that may call /mcp (DNS-rebinding protection): BASE_URL's, SITE_URL's and MCP_ALLOWED_ORIGINS. */
  mcpOrigins: ReadonlySet<string>;
}

/** Whether HOST names this machine's loopback interface only: localhost, 127.0.0.0/8 or ::1 (bracketed or not). */
function isLoopbackHost(host: string): boolean {
  const name = host.toLowerCase().replace(/^\[(.*)\]$/, '$1');
  if (name === 'localhost') return true;
  // ipaddr.process reads ::ffff:127.0.0.1 as the IPv4 address it maps.
  return isIP(name) !== 0 && ipaddr.process(name).range() === 'loopback';
}

export function loadControlPlaneConfig(env: NodeJS.ProcessEnv = process.env): ControlPlaneConfig {
  const parsed = parseEnvironment(controlPlaneEnvSchema, env);
  const problems = sharedEnvProblems(parsed);
  const oidc = [parsed.OIDC_ISSUER, parsed.OIDC_AUDIENCE, parsed.OIDC_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    problems.push('OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL: set all three to use an external identity provider, or none');
  }
  if (Boolean(parsed.STRIPE_SECRET_KEY) !== Boolean(parsed.STRIPE_WEBHOOK_SECRET)) {
    problems.push('STRIPE_SECRET_KEY and STRIPE_WEBHOOK_SECRET: set both to take payments, or neither');
  }
  if (parsed.TTS_PROVIDER === 'http' && !parsed.TTS_API_URL) {
    problems.push('TTS_API_URL: required when TTS_PROVIDER=http (the base address; requests go to {TTS_API_URL}/v1/audio/speech)');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const baseUrl = resolveBaseUrl(parsed);
  const siteUrl = (parsed.SITE_URL ?? baseUrl).replace(/\/+$/, '');
  const ownOrigins = [new URL(baseUrl).origin, new URL(siteUrl).origin];
  return {
    env: parsed,
    dataDir: resolveDataDir(parsed),
    baseUrl,
    wsUrl: parsed.WS_URL ?? `${baseUrl.replace(/^http/, 'ws')}/ws`,
    siteUrl,
    embedded: {
      database: !parsed.DATABASE_URL,
      temporal: !parsed.TEMPORAL_ADDRESS,
      objectStore: !parsed.S3_BUCKET,
    },
    externalIdentityProvider:
      parsed.OIDC_ISSUER && parsed.OIDC_AUDIENCE && parsed.OIDC_JWKS_URL
        ? { issuer: parsed.OIDC_ISSUER, audience: parsed.OIDC_AUDIENCE, jwksUrl: parsed.OIDC_JWKS_URL }
        : undefined,
    devSignIn: !(parsed.OIDC_ISSUER && parsed.OIDC_AUDIENCE && parsed.OIDC_JWKS_URL) && isLoopbackHost(parsed.HOST),
    stripe:
      parsed.STRIPE_SECRET_KEY && parsed.STRIPE_WEBHOOK_SECRET
        ? {
            secretKey: parsed.STRIPE_SECRET_KEY,
            webhookSecret: parsed.STRIPE_WEBHOOK_SECRET,
            apiBase: parsed.STRIPE_API_BASE ? new URL(parsed.STRIPE_API_BASE) : undefined,
            statusTimeoutMs: parsed.STRIPE_STATUS_TIMEOUT_MS,
            prices: { weekly: parsed.STRIPE_PRICE_WEEKLY, annual: parsed.STRIPE_PRICE_ANNUAL },
          }
        : undefined,
    corsOrigins: parsed.CORS_ALLOWED_ORIGINS[0] === '*' ? 'any' : new Set([...ownOrigins, ...parsed.CORS_ALLOWED_ORIGINS]),
    mcpOrigins: new Set([...ownOrigins, ...parsed.MCP_ALLOWED_ORIGINS]),
  };
}
