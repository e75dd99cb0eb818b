import type { Client } from '@temporalio/client';
import type { ObjectStore } from '@petsing/platform/storage';
import type { ControlPlaneConfig } from '../config/env.ts';
import type { DatabaseHandle } from '../db/database.ts';
import type { Logger } from '../logging/logger.ts';
import { ApiKeyRepository } from '../repositories/api-key.repository.ts';
import { CreditRepository } from '../repositories/credit.repository.ts';
import { TemplateRepository } from '../repositories/template.repository.ts';
import { VideoRepository } from '../repositories/video.repository.ts';
import { AudioPreparer } from '../media/audio-preparer.ts';
import { VocalStems } from '../media/separator/vocal-stems.ts';
import { normalizeAudioUpload } from '../media/audio-upload.ts';
import { assertDecodableImage } from '../media/image-upload.ts';
import { RenderScheduler } from '../temporal/render-scheduler.ts';
import { VideoRenderService } from '../services/video-render.service.ts';
import { VideoService } from '../services/video.service.ts';
import { VideoStatusFeed, VideoWatchService } from '../services/video-watch.service.ts';
import { ImageUrlImporter } from '../media/image-url-importer.ts';
import { createConfiguredUserUrlFetcher, type UserUrlFetcher } from '../media/safe-fetch.ts';
import { ImageRepository } from '../repositories/image.repository.ts';
import { ImageService } from '../services/image.service.ts';
import { FaceDetectionClient } from '../temporal/face-detection.ts';
import { FallbackRateLimitStore, InProcessRateLimitStore, PostgresRateLimitStore, RateLimiter, ratePolicies, RedisRateLimitStore } from '../services/rate-limiter.ts';
import { CredentialCache } from '../services/credential-cache.ts';
import { NotifiedCache } from '../services/notified-cache.ts';
import { RateLimitRepository } from '../repositories/rate-limit.repository.ts';
import { IdempotencyService } from '../services/idempotency.service.ts';
import { IdempotencyRepository } from '../repositories/idempotency.repository.ts';
import { UserRepository } from '../repositories/user.repository.ts';
import { ApiKeyService } from '../services/api-key.service.ts';
import type { ApiVersionEntry } from '../services/api-versions.ts';
import { CredentialService } from '../services/credential.service.ts';
import { CreditService } from '../services/credit.service.ts';
import { OAuthRepository } from '../repositories/oauth.repository.ts';
import { oauthSettings } from '../services/oauth-resources.ts';
import { OAuthService } from '../services/oauth.service.ts';
import { TemplateService } from '../services/template.service.ts';
import { KeptTemplateSongs } from '../templates/kept-template-songs.ts';
import { UserService } from '../services/user.service.ts';
import { createIdTokenVerifier, IdentityService } from '../services/identity.service.ts';
import type { DevIdentityKeys } from '../services/dev-identity.ts';
import { HostedAudioRepository } from '../repositories/hosted-audio.repository.ts';
import { HostedAudioService } from '../services/hosted-audio.service.ts';
import { PaymentRepository } from '../repositories/payment.repository.ts';
import { StripeGateway } from '../payments/stripe-gateway.ts';
import { BillingService } from '../services/billing.service.ts';
import { EmailOutboxRepository } from '../repositories/email-outbox.repository.ts';
import { EmailService } from '../services/email.service.ts';
import { EmailDispatcher } from '../services/email-dispatcher.ts';
import { createSmtpSender } from '../email/smtp-sender.ts';
import { VideoReconciler } from '../services/video-reconciler.service.ts';
import { OrphanSweeper } from '../services/orphan-sweeper.service.ts';
import { removeAbandonedScratchFolders } from '../media/scratch-folders.ts';
import { RecurringWork } from '../temporal/recurring-work.ts';
import { createSpeechProvider } from '../media/speech/create-speech-provider.ts';
import { SpeechService } from '../services/speech.service.ts';
import { SoundtrackService } from '../services/soundtrack.service.ts';
import type { VideoPageResolver } from '../media/social/video-page-resolver.ts';
import { YtDlpResolver } from '../media/social/yt-dlp.resolver.ts';
import { WebhookRepository } from '../repositories/webhook.repository.ts';
import { WebhookService } from '../services/webhook.service.ts';
import { WebhookSecretBox } from '../services/webhook-signing.ts';
import { WebhookScheduler } from '../temporal/webhook-scheduler.ts';
import { TaskQueuePollers } from '../temporal/task-queue-pollers.ts';
import { HealthRepository } from '../repositories/health.repository.ts';
import { HealthService } from '../services/health.service.ts';
import { RenderBacklogSampler } from '../temporal/render-backlog.ts';
import { apiPresenter } from '../presenters/api.presenter.ts';
import { AudioRequestService } from '../services/audio-request.service.ts';
import { AudioCheckService } from '../services/audio-check.service.ts';
import { VideoLinks } from '../services/video-links.ts';
import { VideoTransitions } from '../services/video-transitions.ts';
import { noMetrics, type Metrics } from '../services/ports/metrics.ts';

type Services = ReturnType<typeof createServices>;

export type AppContext = {
  config: ControlPlaneConfig;
  logger: Logger;
  database: DatabaseHandle;
  objectStore: ObjectStore;
  apiVersions: readonly ApiVersionEntry[];
  services: Services;
};

export type ServiceDependencies = {
  config: ControlPlaneConfig;
  database: DatabaseHandle;
  objectStore: ObjectStore;
  temporalClient: () => Promise<Client>;
  logger: Logger;
  /** Derives the per-user unsubscribe tokens of lifecycle email (see EmailService). */
  signingSecret: string;
  /** Fetches user-supplied URLs; tests pass one whose address policy admits their local fixture server. */
  userUrlFetcher?: UserUrlFetcher;
  /** The development identity provider's keys; absent when an external provider (OIDC_*) is configured. */
  devIdentityKeys?: DevIdentityKeys;
  /** Finds the media of short-video pages; default yt-dlp. Tests pass one that points at their fixture server. */
  videoPageResolver?: VideoPageResolver;
  /** What the process counts for Prometheus (docs/metrics.md); default: nothing. */
  metrics?: Metrics;
};

export function createServices({ config, database, objectStore, temporalClient, logger, signingSecret, userUrlFetcher, devIdentityKeys, videoPageResolver, metrics = noMetrics }: ServiceDependencies) {
  const { db } = database;
  const urlFetcher = userUrlFetcher ?? createConfiguredUserUrlFetcher(config.env.DEV_ALLOW_LOCAL_URLS);
  const userRepository = new UserRepository(db);
  const users = new UserService(userRepository);
  const emailOutbox = new EmailOutboxRepository(db, database.kind === 'postgres');
  const email = new EmailService(userRepository, emailOutbox, { baseUrl: config.baseUrl, siteUrl: config.siteUrl, signingSecret });
  const emailDispatcher = new EmailDispatcher(
    emailOutbox,
    config.env.SMTP_URL ? createSmtpSender(config.env.SMTP_URL, config.env.EMAIL_FROM ?? `petsing <no-reply@${new URL(config.siteUrl).hostname}>`) : undefined,
    logger,
    { intervalMs: config.env.EMAIL_DISPATCH_INTERVAL_MS },
  );
  const recurringWork = new RecurringWork(temporalClient, {
    intervalSeconds: config.env.RECONCILE_INTERVAL_SECONDS,
    graceSeconds: config.env.RECONCILE_GRACE_SECONDS,
  });
  const identity = new IdentityService({
    verify: createIdTokenVerifier(config, devIdentityKeys),
    users,
    userRepository,
    logger,
    onAccountCreated: (user) => email.welcome(user).then(() => {}),
  });
  const hostedAudioRepository = new HostedAudioRepository(db);
  const hostedAudio = new HostedAudioService(hostedAudioRepository, objectStore, config.baseUrl, normalizeAudioUpload);
  const speech = new SpeechService({ provider: createSpeechProvider(config.env, logger), hostedAudio, objects: objectStore, baseUrl: config.baseUrl, logger });
  const soundtracks = new SoundtrackService({
    resolver: videoPageResolver ?? new YtDlpResolver({ binary: config.env.YTDLP_PATH ?? 'yt-dlp', timeoutMs: config.env.SOCIAL_RESOLVE_TIMEOUT_MS }),
    fetcher: urlFetcher,
    hostedAudio,
    logger,
    settings: { allowedHosts: config.env.SOCIAL_ALLOWED_HOSTS, maxMediaBytes: config.env.SOCIAL_MEDIA_MAX_BYTES },
  });
  const credentialCache = new CredentialCache(config.env.CREDENTIAL_CACHE_TTL_SECONDS * 1000);
  const apiKeys = new ApiKeyService(new ApiKeyRepository(db), credentialCache, logger);
  const creditRepository = new CreditRepository(db);
  const credits = new CreditService(creditRepository, metrics);
  const templateRepository = new TemplateRepository(db);
  // Vocal isolation of audio preparation (control worker): the model is checked at start, loaded on first use.
  const vocalStems = new VocalStems(objectStore, {
    ...(config.env.SEPARATOR_MODEL_PATH ? { path: config.env.SEPARATOR_MODEL_PATH } : {}),
    provider: config.env.SEPARATOR_EXECUTION_PROVIDER,
    cudaFallback: config.env.SEPARATOR_CUDA_FALLBACK,
    warn: (message, details) => logger.warn(details, message),
  });
  const audioPreparer = new AudioPreparer(objectStore, undefined, vocalStems);
  const templates = new TemplateService(templateRepository, objectStore, audioPreparer, new KeptTemplateSongs());
  const oauth = new OAuthService(new OAuthRepository(db), oauthSettings(config), credentialCache);
  const credentials = new CredentialService(apiKeys, oauth, credentialCache);
  const videoRepository = new VideoRepository(db);
  const scheduler = new RenderScheduler(temporalClient);
  const imageUrls = new ImageUrlImporter(urlFetcher, objectStore, config.env.ALLOW_HTTP_IMAGE_URLS);
  const images = new ImageService({
    images: new ImageRepository(db),
    objects: objectStore,
    detector: new FaceDetectionClient(temporalClient, config.env.FACE_DETECTION_TIMEOUT_MS),
    imageUrls,
    logger,
  });
  const videoLinks = new VideoLinks(objectStore, config.env.DOWNLOAD_URL_TTL_SECONDS);
  const webhooks = new WebhookService({
    webhooks: new WebhookRepository(db),
    videos: videoRepository,
    fetcher: urlFetcher,
    secrets: new WebhookSecretBox(signingSecret),
    scheduler: new WebhookScheduler(temporalClient),
    email,
    represent: apiPresenter({ baseUrl: config.baseUrl, links: videoLinks }).video,
    settings: { retryDelaysSeconds: config.env.WEBHOOK_RETRY_SCHEDULE_SECONDS, disableAfterSeconds: config.env.WEBHOOK_DISABLE_AFTER_SECONDS },
    logger,
    metrics,
  });
  const transitions = new VideoTransitions(videoRepository, webhooks, metrics);
  const reconciler = new VideoReconciler(videoRepository, transitions, scheduler, logger);
  const videos = new VideoService({
    videos: videoRepository,
    transitions,
    objects: objectStore,
    scheduler,
    logger,
    templates,
    imageUrls,
    images,
    hostedAudio,
    uploads: { assertDecodableImage, normalizeAudio: normalizeAudioUpload },
    recent: new NotifiedCache(config.env.VIDEO_CACHE_TTL_SECONDS * 1000),
    webhookUrls: webhooks,
    metrics,
  });
  const sweeper = new OrphanSweeper(objectStore, videoRepository, removeAbandonedScratchFolders, {
    intervalSeconds: config.env.SWEEP_INTERVAL_SECONDS,
    minAgeSeconds: config.env.SWEEP_MIN_AGE_SECONDS,
  }, logger);
  // A wait is woken by the status feed, whose notification may come before the cache's: it reads the database.
  const videoWatch = new VideoWatchService((userId, videoId) => videos.getLatest(userId, videoId), new VideoStatusFeed(database.listen, logger));
  const databaseRateLimits = database.kind === 'pglite' ? new InProcessRateLimitStore() : new PostgresRateLimitStore(new RateLimitRepository(db));
  const rateLimiter = new RateLimiter(
    config.env.REDIS_URL ? new FallbackRateLimitStore(new RedisRateLimitStore(config.env.REDIS_URL), databaseRateLimits, logger) : databaseRateLimits,
    ratePolicies(
      config.env.RATE_LIMIT_READS_PER_MINUTE,
      config.env.RATE_LIMIT_WRITES_PER_MINUTE,
      config.env.RATE_LIMIT_WEB_MEDIA_PER_MINUTE,
      config.env.RATE_LIMIT_SIGN_INS_PER_MINUTE,
    ),
    Date.now,
    metrics,
  );
  const idempotency = new IdempotencyService(new IdempotencyRepository(db));
  const billing = new BillingService({
    payments: new PaymentRepository(db, creditRepository),
    videos: videoRepository,
    scheduler,
    gateway: config.stripe ? new StripeGateway(config.stripe, logger) : undefined,
    settings: { siteUrl: config.siteUrl, statusTimeoutMs: config.env.STRIPE_STATUS_TIMEOUT_MS },
    logger,
    metrics,
  });
  const renders = new VideoRenderService({
    videos: videoRepository,
    transitions,
    templates: templateRepository,
    objects: objectStore,
    audio: audioPreparer,
    hostedAudio: hostedAudioRepository,
    imageUrls,
    logger,
    onCompleted: (video) => email.videoReady(video),
    metrics,
  });
  const audioRequests = new AudioRequestService(speech, soundtracks);
  const audioChecks = new AudioCheckService(vocalStems, objectStore, hostedAudio);
  const renderBacklog = new RenderBacklogSampler(temporalClient, config.env.TEMPORAL_NAMESPACE, metrics, logger);
  const health = new HealthService(new HealthRepository(db), new TaskQueuePollers(temporalClient, config.env.TEMPORAL_NAMESPACE));
  return { vocalStems, audioChecks, health, metrics, renderBacklog, audioRequests, videoLinks, webhooks, billing, users, identity, hostedAudio, speech, soundtracks, apiKeys, credits, templates, oauth, credentials, videos, videoWatch, images, renders, scheduler, rateLimiter, idempotency, email, emailDispatcher, recurringWork, reconciler, sweeper };
}

