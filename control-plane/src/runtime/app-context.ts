import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createObjectStore, type ObjectStore } from '@petsing/workflows/storage';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { DatabaseHandle } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { ApiKeyRepository } from '../repositories/api-key.repository.ts';
import { CreditRepository } from '../repositories/credit.repository.ts';
import { TemplateRepository } from '../repositories/template.repository.ts';
import { UserRepository } from '../repositories/user.repository.ts';
import { ApiKeyService } from '../services/api-key.service.ts';
import type { ApiVersionEntry } from '../services/api-versions.ts';
import { CredentialService } from '../services/credential.service.ts';
import { CreditService } from '../services/credit.service.ts';
import { randomToken } from '../services/secrets.ts';
import { TemplateService } from '../services/template.service.ts';
import { UserService } from '../services/user.service.ts';

export type Services = ReturnType<typeof createServices>;

export type AppContext = {
  config: ControlPlaneConfig;
  logger: Logger;
  database: DatabaseHandle;
  objectStore: ObjectStore;
  signingSecret: string;
  apiVersions: readonly ApiVersionEntry[];
  services: Services;
};

export function createServices(database: DatabaseHandle, objectStore: ObjectStore) {
  const { db } = database;
  const users = new UserService(new UserRepository(db));
  const apiKeys = new ApiKeyService(new ApiKeyRepository(db));
  const credits = new CreditService(new CreditRepository(db));
  const templates = new TemplateService(new TemplateRepository(db), objectStore);
  const credentials = new CredentialService(apiKeys);
  return { users, apiKeys, credits, templates, credentials };
}

/**
 * The secret that signs local download links and development ID tokens. Configured with SIGNING_SECRET;
 * in the embedded default it is generated once and kept in DATA_DIR so links survive restarts.
 */
export async function loadSigningSecret(config: ControlPlaneConfig): Promise<string> {
  if (config.env.SIGNING_SECRET) return config.env.SIGNING_SECRET;
  const path = join(config.dataDir, 'signing-secret');
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const secret = randomToken(48);
  await writeFile(path, secret, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error;
  });
  await chmod(path, 0o600);
  return (await readFile(path, 'utf8')).trim();
}

export async function openObjectStore(config: ControlPlaneConfig, signingSecret: string): Promise<ObjectStore> {
  const { env } = config;
  if (!env.S3_BUCKET) {
    return createObjectStore({
      kind: 'local',
      root: join(config.dataDir, 'objects'),
      publicBaseUrl: config.baseUrl,
      signingSecret,
    });
  }
  return createObjectStore({
    kind: 's3',
    bucket: env.S3_BUCKET,
    region: env.S3_REGION,
    forcePathStyle: env.S3_FORCE_PATH_STYLE,
    ...(env.S3_ENDPOINT ? { endpoint: env.S3_ENDPOINT } : {}),
    ...(env.S3_ACCESS_KEY_ID && env.S3_SECRET_ACCESS_KEY
      ? { accessKeyId: env.S3_ACCESS_KEY_ID, secretAccessKey: env.S3_SECRET_ACCESS_KEY }
      : {}),
  });
}
