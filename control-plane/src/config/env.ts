import { z } from 'zod';
import {
  booleanFlag,
  ConfigError,
  optionalString,
  parseEnvironment,
  portNumber,
  resolveBaseUrl,
  resolveDataDir,
  sharedEnvProblems,
  sharedEnvShape,
} from '@petsing/workflows/runtime';

export { ConfigError, parseEnvironment };

/**
 * Every environment variable the control plane reads (the shared Temporal and storage ones included).
 * Unset means "embedded default": PGlite, a local object store and a Temporal dev server under DATA_DIR.
 * Documented in README.md and .env.example; keep the three in step.
 */
export const controlPlaneEnvSchema = z.object({
  ...sharedEnvShape,
  HOST: z.string().default('0.0.0.0'),
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

  RATE_LIMIT_READS_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
  RATE_LIMIT_WRITES_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(10),
  /** Browser origins, besides BASE_URL's and SITE_URL's, that may call /mcp (comma-separated). */
  MCP_ALLOWED_ORIGINS: z
    .string()
    .default('')
    .transform((list) => list.split(',').map((entry) => entry.trim()).filter(Boolean))
    .pipe(z.array(z.url({ protocol: /^https?$/ }).transform((url) => new URL(url).origin))),
  /** Development only: accept http:// image URLs (https is required otherwise). */
  ALLOW_HTTP_IMAGE_URLS: booleanFlag(false),
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),
  OAUTH_ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(24 * 3600).default(3600),
  OAUTH_REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(1).max(365 * 24 * 3600).default(30 * 24 * 3600),
  OAUTH_CODE_TTL_SECONDS: z.coerce.number().int().min(1).max(600).default(60),

  OIDC_ISSUER: optionalString.pipe(z.url().optional()),
  OIDC_AUDIENCE: optionalString,
  OIDC_JWKS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
  /** After fetching the provider's keys, how long a token with an unknown kid waits before they are fetched again. */
  OIDC_JWKS_COOLDOWN_SECONDS: z.coerce.number().int().min(0).max(3600).default(30),
});

export type ControlPlaneEnv = z.infer<typeof controlPlaneEnvSchema>;

export interface ControlPlaneConfig {
  env: ControlPlaneEnv;
  dataDir: string;
  baseUrl: string;
  wsUrl: string;
  siteUrl: string;
  embedded: { database: boolean; temporal: boolean; objectStore: boolean };
  externalIdentityProvider: { issuer: string; audience: string; jwksUrl: string } | undefined;
}

export function loadControlPlaneConfig(env: NodeJS.ProcessEnv = process.env): ControlPlaneConfig {
  const parsed = parseEnvironment(controlPlaneEnvSchema, env);
  const problems = sharedEnvProblems(parsed);
  const oidc = [parsed.OIDC_ISSUER, parsed.OIDC_AUDIENCE, parsed.OIDC_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    problems.push('OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL: set all three to use an external identity provider, or none');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const baseUrl = resolveBaseUrl(parsed);
  return {
    env: parsed,
    dataDir: resolveDataDir(parsed),
    baseUrl,
    wsUrl: parsed.WS_URL ?? `${baseUrl.replace(/^http/, 'ws')}/ws`,
    siteUrl: (parsed.SITE_URL ?? baseUrl).replace(/\/+$/, ''),
    embedded: {
      database: !parsed.DATABASE_URL,
      temporal: !parsed.TEMPORAL_ADDRESS,
      objectStore: !parsed.S3_BUCKET,
    },
    externalIdentityProvider:
      parsed.OIDC_ISSUER && parsed.OIDC_AUDIENCE && parsed.OIDC_JWKS_URL
        ? { issuer: parsed.OIDC_ISSUER, audience: parsed.OIDC_AUDIENCE, jwksUrl: parsed.OIDC_JWKS_URL }
        : undefined,
  };
}
