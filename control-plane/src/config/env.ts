import { resolve } from 'node:path';
import { z } from 'zod';

const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((value) => (value === undefined || value === '' ? fallback : ['true', '1', 'yes'].includes(value)));

const port = (fallback: number) => z.coerce.number().int().min(1).max(65_535).default(fallback);

/**
 * Every environment variable the control plane reads. Unset means "embedded default":
 * PGlite, a local object store and a Temporal dev server, all under DATA_DIR.
 * Documented in README.md and .env.example; keep the three in step.
 */
export const controlPlaneEnvSchema = z.object({
  PORT: port(8080),
  HOST: z.string().default('0.0.0.0'),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  WS_URL: z.url({ protocol: /^wss?$/ }).optional(),
  SITE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  TRUST_PROXY: z
    .string()
    .default('loopback')
    .meta({ description: 'Express trust proxy setting: which proxies may set X-Forwarded-For.' }),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),

  DATABASE_URL: optionalString.pipe(z.url({ protocol: /^postgres(ql)?$/ }).optional()),
  DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(200).default(10),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TLS: booleanFlag(false),
  TEMPORAL_TLS_CERT_PATH: optionalString,
  TEMPORAL_TLS_KEY_PATH: optionalString,
  TEMPORAL_CLI_PATH: optionalString,
  TEMPORAL_DEV_PORT: port(7233),
  TEMPORAL_DEV_UI_PORT: port(8233),

  S3_BUCKET: optionalString,
  S3_ENDPOINT: optionalString.pipe(z.url().optional()),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: booleanFlag(false),

  SIGNING_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  DOWNLOAD_URL_TTL_SECONDS: z.coerce.number().int().min(60).max(7 * 24 * 3600).default(3600),

  OIDC_ISSUER: optionalString.pipe(z.url().optional()),
  OIDC_AUDIENCE: optionalString,
  OIDC_JWKS_URL: optionalString.pipe(z.url({ protocol: /^https?$/ }).optional()),
});

export type ControlPlaneEnv = z.infer<typeof controlPlaneEnvSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment with any zod object schema; every problem names its variable. */
export function parseEnvironment<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(
      result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`),
    );
  }
  return result.data;
}

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
  const problems: string[] = [];
  const oidc = [parsed.OIDC_ISSUER, parsed.OIDC_AUDIENCE, parsed.OIDC_JWKS_URL];
  if (oidc.some(Boolean) && !oidc.every(Boolean)) {
    problems.push('OIDC_ISSUER, OIDC_AUDIENCE and OIDC_JWKS_URL: set all three to use an external identity provider, or none');
  }
  if (parsed.S3_BUCKET && Boolean(parsed.S3_ACCESS_KEY_ID) !== Boolean(parsed.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both or neither (neither uses the default AWS credential chain)');
  }
  if (Boolean(parsed.TEMPORAL_TLS_CERT_PATH) !== Boolean(parsed.TEMPORAL_TLS_KEY_PATH)) {
    problems.push('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both for mutual TLS, or neither');
  }
  if (problems.length > 0) throw new ConfigError(problems);

  const baseUrl = stripTrailingSlash(parsed.BASE_URL ?? `http://localhost:${parsed.PORT}`);
  const wsUrl = parsed.WS_URL ?? `${baseUrl.replace(/^http/, 'ws')}/ws`;
  return {
    env: parsed,
    dataDir: resolve(parsed.DATA_DIR),
    baseUrl,
    wsUrl,
    siteUrl: stripTrailingSlash(parsed.SITE_URL ?? baseUrl),
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

function stripTrailingSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
