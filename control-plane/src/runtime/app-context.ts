import type { Client } from '@temporalio/client';
import type { ObjectStore } from '@petsing/workflows/storage';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { DatabaseHandle } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { ApiKeyRepository } from '../repositories/api-key.repository.ts';
import { CreditRepository } from '../repositories/credit.repository.ts';
import { TemplateRepository } from '../repositories/template.repository.ts';
import { VideoRepository } from '../repositories/video.repository.ts';
import { AudioPreparer } from '../media/audio-preparer.ts';
import { RenderScheduler } from '../temporal/render-scheduler.ts';
import { VideoRenderService } from '../services/video-render.service.ts';
import { VideoService } from '../services/video.service.ts';
import { ImageUrlImporter } from '../media/image-url-importer.ts';
import { createUserUrlFetcher, type UserUrlFetcher } from '../media/safe-fetch.ts';
import { InProcessRateLimitStore, PostgresRateLimitStore, RateLimiter, ratePolicies } from '../services/rate-limiter.ts';
import { RateLimitRepository } from '../repositories/rate-limit.repository.ts';
import { IdempotencyService } from '../services/idempotency.service.ts';
import { IdempotencyRepository } from '../repositories/idempotency.repository.ts';
import { UserRepository } from '../repositories/user.repository.ts';
import { ApiKeyService } from '../services/api-key.service.ts';
import type { ApiVersionEntry } from '../services/api-versions.ts';
import { CredentialService } from '../services/credential.service.ts';
import { CreditService } from '../services/credit.service.ts';
import { OAuthRepository } from '../repositories/oauth.repository.ts';
import { OAuthService, oauthSettings } from '../services/oauth.service.ts';
import { TemplateService } from '../services/template.service.ts';
import { UserService } from '../services/user.service.ts';
import { createIdTokenVerifier, IdentityService } from '../services/identity.service.ts';
import type { DevIdentityKeys } from '../services/dev-identity.ts';
import { HostedAudioRepository } from '../repositories/hosted-audio.repository.ts';
import { HostedAudioService } from '../services/hosted-audio.service.ts';

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

export type ServiceDependencies = {
  config: ControlPlaneConfig;
  database: DatabaseHandle;
  objectStore: ObjectStore;
  temporalClient: () => Promise<Client>;
  logger: Logger;
  /** Fetches user-supplied URLs; tests pass one whose address policy admits their local fixture server. */
  userUrlFetcher?: UserUrlFetcher;
  /** The development identity provider's keys; absent when an external provider (OIDC_*) is configured. */
  devIdentityKeys?: DevIdentityKeys;
};

export function createServices({ config, database, objectStore, temporalClient, logger, userUrlFetcher, devIdentityKeys }: ServiceDependencies) {
  const { db } = database;
  const userRepository = new UserRepository(db);
  const users = new UserService(userRepository);
  const identity = new IdentityService(createIdTokenVerifier(config, devIdentityKeys), users, userRepository, logger);
  const hostedAudio = new HostedAudioService(new HostedAudioRepository(db), objectStore, config.baseUrl);
  const apiKeys = new ApiKeyService(new ApiKeyRepository(db));
  const credits = new CreditService(new CreditRepository(db));
  const templateRepository = new TemplateRepository(db);
  const audioPreparer = new AudioPreparer(objectStore);
  const templates = new TemplateService(templateRepository, objectStore, audioPreparer);
  const oauth = new OAuthService(new OAuthRepository(db), users, oauthSettings(config));
  const credentials = new CredentialService(apiKeys, oauth);
  const videoRepository = new VideoRepository(db);
  const scheduler = new RenderScheduler(temporalClient);
  const imageUrls = new ImageUrlImporter(userUrlFetcher ?? createUserUrlFetcher(), objectStore, videoRepository, config.env.ALLOW_HTTP_IMAGE_URLS);
  const videos = new VideoService(videoRepository, objectStore, scheduler, logger, config.env.DOWNLOAD_URL_TTL_SECONDS, templates, imageUrls);
  const rateLimiter = new RateLimiter(
    database.kind === 'pglite' ? new InProcessRateLimitStore() : new PostgresRateLimitStore(new RateLimitRepository(db)),
    ratePolicies(config.env.RATE_LIMIT_READS_PER_MINUTE, config.env.RATE_LIMIT_WRITES_PER_MINUTE),
  );
  const idempotency = new IdempotencyService(new IdempotencyRepository(db));
  const renders = new VideoRenderService(videoRepository, templateRepository, objectStore, audioPreparer, (video) => imageUrls.import(video), logger);
  return { users, identity, hostedAudio, apiKeys, credits, templates, oauth, credentials, videos, renders, scheduler, rateLimiter, idempotency };
}

