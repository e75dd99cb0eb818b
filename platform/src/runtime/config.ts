import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import type { ObjectStoreConfig } from '../storage/index.ts';

/**
 * Environment shared by every petsing process that talks to Temporal and object storage: the control
 * plane and the render nodes. Each process composes these into its own schema and parses once.
 */
export const optionalString = z
  .string()
  .trim()
  .transform((value) => (value === '' ? undefined : value))
  .optional();

export const booleanFlag = (fallback: boolean) =>
  z
    .enum(['true', 'false', '1', '0', 'yes', 'no', ''])
    .optional()
    .transform((value) => (value === undefined || value === '' ? fallback : ['true', '1', 'yes'].includes(value)));

export const portNumber = (fallback: number) => z.coerce.number().int().min(1).max(65_535).default(fallback);

/** The Temporal SDK's own metrics (temporal_*) of a worker process listen this far above its metrics port. */
export const TEMPORAL_METRICS_PORT_OFFSET = 100;

/** `host:port` as a socket address (an IPv6 host in brackets). */
export const socketAddress = (host: string, port: number) => (host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`);

/**
 * A process's metrics port (docs/metrics.md): `0` turns its metrics endpoints off. A worker's Temporal SDK
 * metrics listen 100 above it, so it stays below 65 436.
 */
export const metricsPort = (fallback: number) =>
  z.preprocess(
    (value) => (typeof value === 'string' && value.trim() === '' ? undefined : value),
    z.coerce
      .number()
      .int()
      .min(0)
      .max(65_535 - TEMPORAL_METRICS_PORT_OFFSET, `at most ${65_535 - TEMPORAL_METRICS_PORT_OFFSET} (the Temporal SDK's metrics listen ${TEMPORAL_METRICS_PORT_OFFSET} above it), or 0 for none`)
      .default(fallback),
  );

export const sharedEnvShape = {
  PORT: portNumber(8080),
  BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  DATA_DIR: z.string().min(1).default('./.data'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Interface of the metrics endpoints (each process's own port): loopback unless a scraper must reach them (0.0.0.0 in containers). */
  METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),

  TEMPORAL_ADDRESS: optionalString,
  TEMPORAL_NAMESPACE: z.string().min(1).default('default'),
  TEMPORAL_API_KEY: optionalString,
  TEMPORAL_TLS: booleanFlag(false),
  TEMPORAL_TLS_CERT_PATH: optionalString,
  TEMPORAL_TLS_KEY_PATH: optionalString,
  TEMPORAL_DEV_PORT: portNumber(7233),

  S3_BUCKET: optionalString,
  S3_ENDPOINT: optionalString.pipe(z.url().optional()),
  S3_REGION: z.string().min(1).default('us-east-1'),
  S3_ACCESS_KEY_ID: optionalString,
  S3_SECRET_ACCESS_KEY: optionalString,
  S3_FORCE_PATH_STYLE: booleanFlag(false),
  /** Endpoint that clients use for download links, when it differs from S3_ENDPOINT (e.g. inside compose). */
  S3_PUBLIC_ENDPOINT: optionalString.pipe(z.url().optional()),
  SIGNING_SECRET: optionalString.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
};

export type SharedEnv = z.infer<z.ZodObject<typeof sharedEnvShape>>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Parses an environment with a zod schema; every problem names its variable. */
export function parseEnvironment<Schema extends z.ZodType>(schema: Schema, env: NodeJS.ProcessEnv): z.infer<Schema> {
  const result = schema.safeParse(env);
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
  }
  return result.data;
}

/** Cross-variable rules of the shared environment. */
export function sharedEnvProblems(env: SharedEnv): string[] {
  const problems: string[] = [];
  if (env.S3_BUCKET && Boolean(env.S3_ACCESS_KEY_ID) !== Boolean(env.S3_SECRET_ACCESS_KEY)) {
    problems.push('S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY: set both or neither (neither uses the default AWS credential chain)');
  }
  if (Boolean(env.TEMPORAL_TLS_CERT_PATH) !== Boolean(env.TEMPORAL_TLS_KEY_PATH)) {
    problems.push('TEMPORAL_TLS_CERT_PATH and TEMPORAL_TLS_KEY_PATH: set both for mutual TLS, or neither');
  }
  return problems;
}

export const resolveDataDir = (env: SharedEnv) => resolve(env.DATA_DIR);
export const resolveBaseUrl = (env: SharedEnv) => (env.BASE_URL ?? `http://localhost:${env.PORT}`).replace(/\/+$/, '');
/** Where Temporal is: the configured cluster, or the embedded dev server's port on this machine. */
export const temporalAddress = (env: SharedEnv) => env.TEMPORAL_ADDRESS ?? `127.0.0.1:${env.TEMPORAL_DEV_PORT}`;

export function objectStoreConfig(env: SharedEnv, signingSecret: string): ObjectStoreConfig {
  if (!env.S3_BUCKET) {
    return { kind: 'local', root: resolve(env.DATA_DIR, 'object-store'), publicBaseUrl: resolveBaseUrl(env), signingSecret };
  }
  return {
    kind: 's3',
    bucket: env.S3_BUCKET,
    region: env.S3_REGION,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
    ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
    ...(env.S3_PUBLIC_ENDPOINT ? { publicEndpoint: env.S3_PUBLIC_ENDPOINT } : {}),
    ...(env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY
      ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY }
      : {}),
  };
}

/**
 * The secret that signs local download links and development ID tokens. Configured with SIGNING_SECRET;
 * otherwise generated once and kept in DATA_DIR (mode 0600) so links survive restarts.
 */
export async function loadSigningSecret(env: SharedEnv): Promise<string> {
  if (env.SIGNING_SECRET) return env.SIGNING_SECRET;
  const dataDir = resolveDataDir(env);
  const path = join(dataDir, 'signing-secret');
  await mkdir(dataDir, { recursive: true });
  await writeFile(path, randomBytes(48).toString('base64url'), { mode: 0o600, flag: 'wx' }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  return (await readFile(path, 'utf8')).trim();
}
