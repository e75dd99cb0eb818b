import type { WebhookAttemptOutcome } from '@petsing/workflows';
import { z } from 'zod';
import type { Video, WebhookDelivery, WebhookEndpoint, WebhookEventType } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { UserUrlFetcher } from '../media/safe-fetch.ts';
import { UrlRefusedError } from '../media/url-refusal.ts';
import type { VideoRepository } from '../repositories/video.repository.ts';
import type { NewWebhookDelivery, WebhookRepository } from '../repositories/webhook.repository.ts';
import type { WebhookScheduling } from './ports/webhook-scheduling.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';
import type { EmailService } from './email.service.ts';
import type { VideoEvents } from './video-transitions.ts';
import { newWebhookSecret, signatureHeader, type WebhookSecretBox } from './webhook-signing.ts';

export const WEBHOOK_EVENTS = ['video.processing', 'video.completed', 'video.failed'] as const satisfies readonly WebhookEventType[];
/** What POST /v1/webhooks/{id}/test sends; never sent otherwise. */
export const TEST_EVENT = 'webhook.test';
export const MAX_WEBHOOK_ENDPOINTS = 10;
/** A 2xx within this long is a success; anything else (a 3xx included: redirects are not followed) a failure. */
const WEBHOOK_ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of an answer the delivery log keeps. */
export const RESPONSE_SNIPPET_BYTES = 1024;
/** How long a rotated-out secret keeps signing when the rotation names no overlap. */
const DEFAULT_ROTATION_OVERLAP_SECONDS = 24 * 3600;
/** The target of a video's own webhook_url in webhook_deliveries (endpoints use their id). */
const VIDEO_URL_TARGET = 'video';

const uuid = z.uuid();

const statusOfEvent: Record<WebhookEventType, Video['status']> = {
  'video.processing': 'processing',
  'video.completed': 'completed',
  'video.failed': 'failed',
};

export type WebhookSettings = { retryDelaysSeconds: number[]; disableAfterSeconds: number };

/** Builds the `data` of a video event: the ApiVideo representation, as GET /v1/videos/{id} answers it. */
export type VideoRepresenter = (video: Video) => Promise<unknown>;

/**
 * Webhooks (Standard Webhooks): endpoints and their secrets, the emission of video events (one delivery
 * per video, event and target, however often it is emitted), and each delivery attempt. The retries are
 * the deliverWebhook workflow's; this service sends one attempt at a time and keeps the log.
 */
export class WebhookService implements VideoEvents {
  private readonly webhooks: WebhookRepository;
  private readonly videos: VideoRepository;
  private readonly fetcher: UserUrlFetcher;
  private readonly secrets: WebhookSecretBox;
  private readonly scheduler: WebhookScheduling;
  private readonly email: EmailService;
  private readonly represent: VideoRepresenter;
  private readonly settings: WebhookSettings;
  private readonly logger: Logger;
  private readonly metrics: Metrics;

  constructor(dependencies: {
    webhooks: WebhookRepository;
    videos: VideoRepository;
    fetcher: UserUrlFetcher;
    secrets: WebhookSecretBox;
    scheduler: WebhookScheduling;
    email: EmailService;
    represent: VideoRepresenter;
    settings: WebhookSettings;
    logger: Logger;
    /** Counts each attempt's outcome; default: nothing. */
    metrics?: Metrics;
  }) {
    ({
      webhooks: this.webhooks, videos: this.videos, fetcher: this.fetcher, secrets: this.secrets, scheduler: this.scheduler,
      email: this.email, represent: this.represent, settings: this.settings, logger: this.logger,
    } = dependencies);
    this.metrics = dependencies.metrics ?? noMetrics;
  }

  async register(userId: string, request: { url: string; events: WebhookEventType[] }): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    await this.vetUrl(request.url);
    if ((await this.webhooks.countEndpoints(userId)) >= MAX_WEBHOOK_ENDPOINTS) {
      throw new AppError('webhook_limit_reached', `An account can have at most ${MAX_WEBHOOK_ENDPOINTS} webhook endpoints.`);
    }
    const secret = newWebhookSecret();
    const endpoint = await this.webhooks.insertEndpoint({ user_id: userId, url: request.url, events: [...new Set(request.events)], secret_ciphertext: this.secrets.seal(secret) });
    return { endpoint, secret };
  }

  list(userId: string): Promise<WebhookEndpoint[]> {
    return this.webhooks.listEndpoints(userId);
  }

  async get(userId: string, id: string): Promise<WebhookEndpoint> {
    const endpoint = await this.webhooks.findEndpoint(userId, id);
    if (!endpoint) throw notFound(`Webhook endpoint ${id}`);
    return endpoint;
  }

  async remove(userId: string, id: string): Promise<void> {
    if (!(await this.webhooks.deleteEndpoint(userId, id))) throw notFound(`Webhook endpoint ${id}`);
  }

  /**
   * POST /v1/webhooks/{id}/enable: an endpoint disabled for failing too long (or one that is on) is on again, its
   * failure streak forgotten; new events reach it, and missed ones can be redelivered from its log.
   */
  async enable(userId: string, id: string): Promise<WebhookEndpoint> {
    // Its address is vetted again first: it may resolve elsewhere by now.
    await this.vetUrl((await this.get(userId, id)).url);
    const enabled = await this.webhooks.enableEndpoint(userId, id, new Date());
    if (!enabled) throw notFound(`Webhook endpoint ${id}`);
    return enabled;
  }

  /** A new secret, answered once; the previous one keeps signing (a second signature) for `overlapSeconds`. */
  async rotate(userId: string, id: string, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<{ endpoint: WebhookEndpoint; secret: string }> {
    const secret = newWebhookSecret();
    const endpoint = await this.webhooks.rotateEndpointSecret(userId, id, this.secrets.seal(secret), new Date(Date.now() + overlapSeconds * 1000));
    if (!endpoint) throw notFound(`Webhook endpoint ${id}`);
    return { endpoint, secret };
  }

  /** The account's default secret (signs the deliveries to videos' webhook_url): made or replaced, answered once. */
  async rotateDefaultSecret(userId: string, overlapSeconds = DEFAULT_ROTATION_OVERLAP_SECONDS): Promise<{ secret: string; previousExpiresAt: Date | null }> {
    const secret = newWebhookSecret();
    const hadOne = (await this.webhooks.accountSecret(userId)) !== undefined;
    const overlapUntil = new Date(Date.now() + overlapSeconds * 1000);
    await this.webhooks.rotateAccountSecret(userId, this.secrets.seal(secret), overlapUntil);
    return { secret, previousExpiresAt: hadOne ? overlapUntil : null };
  }

  /** A create's webhook_url: vetted like an endpoint, and the account needs a default secret to sign with. */
  async vetVideoWebhookUrl(userId: string, url: string): Promise<void> {
    await this.vetUrl(url);
    if (!(await this.webhooks.accountSecret(userId))) {
      throw new AppError('webhook_secret_required', 'A webhook_url needs the account\'s default webhook secret, which signs its deliveries; none was made yet.');
    }
  }

  /** The delivery log of the caller's endpoint, newest first; not_found for another's endpoint. */
  async endpointDeliveries(userId: string, endpointId: string, limit: number) {
    const endpoint = await this.get(userId, endpointId);
    return this.webhooks.listDeliveries({ endpointId: endpoint.id }, limit);
  }

  /** The deliveries to the caller's video's own webhook_url (the create's), newest first; not_found for another's video. */
  async videoUrlDeliveries(userId: string, videoId: string, limit: number) {
    const video = await this.videos.findOwned(videoId, userId);
    if (!video) throw notFound(`Video ${videoId}`);
    return this.webhooks.listDeliveries({ videoId: video.id, target: VIDEO_URL_TARGET }, limit);
  }

  /**
   * Sends a finished delivery again, same webhook-id and body, with the retry schedule of a new one. The endpoint
   * is looked up first; then a malformed delivery id is not_found like an unknown one.
   */
  async redeliver(userId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
    const endpoint = await this.get(userId, endpointId);
    const delivery = uuid.safeParse(deliveryId).success ? await this.webhooks.findEndpointDelivery(endpoint.id, deliveryId) : undefined;
    if (!delivery) throw notFound(`Delivery ${deliveryId}`);
    if (endpoint.disabled_at) throw new AppError('conflict', 'The endpoint is disabled; turn it on with POST /v1/webhooks/{id}/enable first.');
    if (delivery.state === 'pending') throw new AppError('conflict', 'The delivery is still being attempted; redeliver it once it has succeeded or failed.');
    await this.webhooks.reopenDelivery(delivery.id);
    await this.scheduler.startDelivery({ deliveryId: delivery.id, firstAttempt: delivery.attempts + 1, retryDelaysSeconds: this.settings.retryDelaysSeconds });
    return { ...delivery, state: 'pending' };
  }

  /** POST /v1/webhooks/{id}/test: one signed `webhook.test` attempt now, without retries, logged like any delivery. */
  async test(userId: string, endpointId: string) {
    const endpoint = await this.get(userId, endpointId);
    const delivery = await this.webhooks.insertDelivery({
      user_id: userId,
      endpoint_id: endpoint.id,
      target: endpoint.id,
      url: endpoint.url,
      video_id: null,
      event_type: TEST_EVENT,
      payload: JSON.stringify({ type: TEST_EVENT, timestamp: new Date().toISOString(), data: { endpoint_id: endpoint.id } }),
    });
    await this.attempt(delivery.id, 1, true);
    const [withAttempts] = (await this.webhooks.listDeliveries({ endpointId: endpoint.id }, 50)).filter((entry) => entry.delivery.id === delivery.id);
    return withAttempts!;
  }

  /**
   * Emits a video's event to the account's subscribed endpoints and its own webhook_url: the deliveries are
   * recorded once (the unique (video, event, target)) and their workflows started once (the workflow id is the
   * delivery's), so an activity retried after a crash emits nothing twice. Nothing is sent when the video has
   * moved on or is gone. Only VideoTransitions calls it, after the change it announces.
   */
  async emitVideoEvent(videoId: string, event: WebhookEventType): Promise<void> {
    const video = await this.videos.findById(videoId);
    if (!video || video.status !== statusOfEvent[event]) return;
    const endpoints = await this.webhooks.subscribedEndpoints(video.user_id, event);
    if (endpoints.length === 0 && !video.webhook_url) return;
    const payload = JSON.stringify({ type: event, timestamp: new Date().toISOString(), data: await this.represent(video) });
    const common = { user_id: video.user_id, video_id: video.id, event_type: event, payload };
    const rows: NewWebhookDelivery[] = endpoints.map((endpoint) => ({ ...common, endpoint_id: endpoint.id, target: endpoint.id, url: endpoint.url }));
    if (video.webhook_url) rows.push({ ...common, endpoint_id: null, target: VIDEO_URL_TARGET, url: video.webhook_url });
    const deliveries = await this.webhooks.insertVideoDeliveries(video.id, event, rows);
    for (const delivery of deliveries) {
      if (delivery.state !== 'pending' || delivery.attempts > 0) continue;
      await this.scheduler.startDelivery({ deliveryId: delivery.id, firstAttempt: 1, retryDelaysSeconds: this.settings.retryDelaysSeconds });
    }
  }

  /**
   * One attempt of a delivery: the URL vetted again (names resolved now, every address checked), the body
   * signed with every secret that signs now, a 2xx within 10 s is a success. The attempt is logged; an
   * endpoint failing without a success for WEBHOOK_DISABLE_AFTER_SECONDS is disabled and its owner emailed.
   */
  async attempt(deliveryId: string, attempt: number, last: boolean): Promise<WebhookAttemptOutcome> {
    const delivery = await this.webhooks.findDelivery(deliveryId);
    // A retried activity whose attempt was delivered already: answered again, counted once.
    if (delivery?.state === 'delivered' && delivery.attempts >= attempt) return 'delivered';
    const outcome = delivery ? await this.send(delivery, attempt, last) : 'abandoned';
    this.metrics.webhookDelivered(outcome);
    return outcome;
  }

  private async send(delivery: WebhookDelivery, attempt: number, last: boolean): Promise<WebhookAttemptOutcome> {
    const target = await this.targetOf(delivery);
    if (!target) {
      await this.webhooks.recordAttempt({ delivery_id: delivery.id, attempt, status_code: null, latency_ms: 0, response_snippet: null, error: 'The endpoint is disabled or gone; nothing was sent.' }, 'failed');
      return 'abandoned';
    }
    const timestamp = Math.floor(Date.now() / 1000);
    const started = performance.now();
    let statusCode: number | null = null;
    let snippet: string | null = null;
    let error: string | null = null;
    try {
      const answer = await this.fetcher.post(target.url, {
        body: delivery.payload,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'petsing-webhooks/1',
          'webhook-id': delivery.id,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(target.secrets, delivery.id, timestamp, delivery.payload),
        },
        timeoutMs: WEBHOOK_ATTEMPT_TIMEOUT_MS,
        maxResponseBytes: RESPONSE_SNIPPET_BYTES,
      });
      statusCode = answer.statusCode;
      snippet = answer.responseSnippet;
      if (statusCode < 200 || statusCode > 299) error = `The endpoint answered HTTP ${statusCode}.`;
    } catch (caught) {
      if (!(caught instanceof UrlRefusedError)) throw caught;
      error = `${caught.code === 'image_url_refused' ? 'Refused' : 'Unreachable'}: ${caught.message}`;
    }
    const delivered = error === null;
    await this.webhooks.recordAttempt(
      { delivery_id: delivery.id, attempt, status_code: statusCode, latency_ms: Math.round(performance.now() - started), response_snippet: snippet, error },
      delivered ? 'delivered' : last ? 'failed' : 'pending',
    );
    if (!delivery.endpoint_id) return delivered ? 'delivered' : 'failed';
    if (delivered) {
      await this.webhooks.markEndpointSucceeded(delivery.endpoint_id);
      return 'delivered';
    }
    return (await this.disableWhenFailingTooLong(delivery.endpoint_id)) ? 'abandoned' : 'failed';
  }

  private async disableWhenFailingTooLong(endpointId: string): Promise<boolean> {
    const now = new Date();
    const failingSince = await this.webhooks.markEndpointFailed(endpointId, now);
    if (!failingSince || now.getTime() - failingSince.getTime() < this.settings.disableAfterSeconds * 1000) return false;
    const disabled = await this.webhooks.disableEndpoint(endpointId, now);
    if (disabled) {
      this.logger.warn({ endpointId, userId: disabled.user_id }, 'webhook endpoint disabled after failing too long');
      await this.email.webhookDisabled(disabled.user_id, { id: disabled.id, url: disabled.url, disabledAt: now }, describeDuration(this.settings.disableAfterSeconds));
    }
    return true;
  }

  /** Where a delivery goes and the secrets that sign it now; undefined when it can no longer be sent. */
  private async targetOf(delivery: WebhookDelivery): Promise<{ url: string; secrets: string[] } | undefined> {
    if (delivery.endpoint_id) {
      const endpoint = await this.webhooks.findEndpointById(delivery.endpoint_id);
      if (!endpoint || endpoint.disabled_at) return undefined;
      return { url: endpoint.url, secrets: this.signingSecrets(endpoint) };
    }
    const account = await this.webhooks.accountSecret(delivery.user_id);
    if (!account) return undefined;
    return { url: delivery.url, secrets: this.signingSecrets(account) };
  }

  private signingSecrets(holder: { secret_ciphertext: string; previous_secret_ciphertext: string | null; previous_secret_expires_at: Date | null }): string[] {
    const secrets = [this.secrets.open(holder.secret_ciphertext)];
    if (holder.previous_secret_ciphertext && holder.previous_secret_expires_at && holder.previous_secret_expires_at.getTime() > Date.now()) {
      secrets.push(this.secrets.open(holder.previous_secret_ciphertext));
    }
    return secrets;
  }

  /** The outbound-URL rules of image_url, names resolved now; an endpoint must use https unless DEV_ALLOW_LOCAL_URLS is on. */
  private async vetUrl(url: string): Promise<void> {
    try {
      await this.fetcher.vetHost(url);
    } catch (error) {
      if (!(error instanceof UrlRefusedError)) throw error;
      throw new AppError('webhook_url_refused', `The webhook URL was refused: ${error.message}`, { cause: error });
    }
  }
}

function describeDuration(seconds: number): string {
  if (seconds >= 86_400) return `${Math.round(seconds / 86_400)} days`;
  if (seconds >= 3600) return `${Math.round(seconds / 3600)} hours`;
  return `${Math.max(1, Math.round(seconds / 60))} minutes`;
}
