import createClient, { type Client } from 'openapi-fetch';
import { PetsingError, VideoFailedError, WaitTimeoutError } from './errors.ts';
import { serverSentEvents } from './events.ts';
import { fileForm, type FileInput, type FileOptions } from './files.ts';
import { DEFAULT_RETRY_POLICY, retryingFetch, sleep, type RetryPolicy } from './retry.ts';
import type { components, paths } from './schema.ts';

type Schemas = components['schemas'];
export type ApiVideo = Schemas['ApiVideo'];
export type CreatedApiVideo = Schemas['CreatedApiVideo'];
export type ApiTemplate = Schemas['ApiTemplate'];
export type ApiAccount = Schemas['ApiAccount'];
export type ApiCredits = Schemas['ApiCredits'];
export type ApiImage = Schemas['ApiImage'];
export type ApiAudio = Schemas['ApiAudio'];
export type Voice = Schemas['Voice'];
export type ErrorDetail = Schemas['ErrorDetail'];
export type WebhookEndpoint = Schemas['WebhookEndpoint'];
export type CreatedWebhookEndpoint = Schemas['CreatedWebhookEndpoint'];
export type DefaultWebhookSecret = Schemas['DefaultWebhookSecret'];
export type WebhookDelivery = Schemas['WebhookDelivery'];
export type WebhookEvent = Schemas['CreateWebhookRequest']['events'];

type CreateRequest = Schemas['CreateApiVideoRequest'];
type OneOf<T, A extends keyof T, B extends keyof T> =
  | ({ [K in A]-?: NonNullable<T[K]> } & { [K in B]?: never })
  | ({ [K in B]-?: NonNullable<T[K]> } & { [K in A]?: never });
/** POST /v1/videos: a photo (`image_url` or `image_id`) and a sound (`template_id` or `audio_id`), exactly one of each. */
export type CreateVideoRequest = Omit<CreateRequest, 'template_id' | 'audio_id' | 'image_url' | 'image_id'> &
  OneOf<CreateRequest, 'template_id', 'audio_id'> &
  OneOf<CreateRequest, 'image_url', 'image_id'>;

export type PetsingOptions = {
  /** An API key (`psk_live_…`) or an OAuth 2.1 access token for the /v1 resource. */
  apiKey: string;
  /** The service's address, for example `http://localhost:8080` (without `/v1`). */
  baseUrl: string;
  /** Automatic retries of retryable errors; see RetryPolicy. */
  retry?: Partial<RetryPolicy>;
  /** How often waitForVideo reads the video when the service does not hold the request (`Prefer: wait`): the documented 10 s. */
  pollIntervalMs?: number;
  /** A fetch to send requests with (default: the global one). */
  fetch?: typeof fetch;
};

export type RequestOptions = { signal?: AbortSignal };

export type WaitOptions = RequestOptions & {
  /** Give up after this long with WaitTimeoutError (default 10 minutes). */
  timeoutMs?: number;
  /** Called with every non-terminal record read (status and progress). */
  onUpdate?: (video: ApiVideo) => void;
};

export type VideoEventOptions = RequestOptions & {
  /** Resume after this event id (a `VideoEvent.eventId` seen before): only newer states come. */
  lastEventId?: number;
};

/** One state of a video from its event stream; `eventId` grows with every change of one render. */
export type VideoEvent = { eventId: number; video: ApiVideo };

const DEFAULT_POLL_INTERVAL_MS = 10_000;
// What an EventSource waits before reconnecting until the server says otherwise (its `retry` field).
const DEFAULT_RECONNECT_MS = 3_000;
const DEFAULT_WAIT_TIMEOUT_MS = 10 * 60_000;
// RFC 7240 `Prefer: wait=N`: the service holds GET /v1/videos/{id} at most this long.
const MAX_WAIT_SECONDS = 60;
// A service that claims to wait yet answers at once is not read more often than this.
const MIN_READ_GAP_MS = 1_000;

/** The petsing public API (/v1). Every method throws PetsingError for an error answer, after retrying the retryable ones. */
export class Petsing {
  private readonly api: Client<paths>;
  private readonly pollIntervalMs: number;

  constructor(options: PetsingOptions) {
    this.pollIntervalMs = options.pollIntervalMs ?? DEFAULT_POLL_INTERVAL_MS;
    this.api = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/+$/, ''),
      headers: { Authorization: `Bearer ${options.apiKey}` },
      fetch: retryingFetch(options.fetch ?? globalThis.fetch, { ...DEFAULT_RETRY_POLICY, ...options.retry }),
    });
  }

  /**
   * Starts a video (one credit). Sent with an Idempotency-Key, a fresh UUID unless given, and the same key on
   * every retry, so a create retried after a lost answer is charged once and answers the same video.
   */
  async createVideo(request: CreateVideoRequest, options: RequestOptions & { idempotencyKey?: string } = {}): Promise<CreatedApiVideo> {
    const { idempotencyKey = crypto.randomUUID(), signal } = options;
    return answer(await this.api.POST('/v1/videos', { body: request, params: { header: { 'Idempotency-Key': idempotencyKey } }, signal }));
  }

  async getVideo(id: string, options: RequestOptions = {}): Promise<ApiVideo> {
    return answer(await this.api.GET('/v1/videos/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /** The account's videos, newest first (web and API alike); `limit` 1-100, default 25. */
  async listVideos(options: RequestOptions & { limit?: number } = {}): Promise<ApiVideo[]> {
    const query = options.limit === undefined ? {} : { limit: options.limit };
    return answer(await this.api.GET('/v1/videos', { params: { query }, signal: options.signal })).data;
  }

  /**
   * Stops a video's render: it ends `failed` with error code `canceled` and its credit is refunded. A failed
   * video is answered as it is; a completed one throws PetsingError 409 `video_already_completed`.
   */
  async cancelVideo(id: string, options: RequestOptions = {}): Promise<ApiVideo> {
    return answer(await this.api.POST('/v1/videos/{id}/cancel', { params: { path: { id } }, signal: options.signal }));
  }

  /** Deletes a video and its files for good; its credit is not refunded. */
  async deleteVideo(id: string, options: RequestOptions = {}): Promise<void> {
    answer(await this.api.DELETE('/v1/videos/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  async listTemplates(options: RequestOptions = {}): Promise<ApiTemplate[]> {
    return answer(await this.api.GET('/v1/templates', { signal: options.signal })).data;
  }

  async me(options: RequestOptions = {}): Promise<ApiAccount> {
    return answer(await this.api.GET('/v1/me', { signal: options.signal }));
  }

  /** The balance and the latest ledger entries. */
  async credits(options: RequestOptions = {}): Promise<ApiCredits> {
    return answer(await this.api.GET('/v1/credits', { signal: options.signal }));
  }

  /** Stores a photo for 24 hours (POST /v1/images) and answers the face found in it; create with its `id` as `image_id`. */
  async uploadImage(file: FileInput, options: RequestOptions & FileOptions = {}): Promise<ApiImage> {
    const form = await fileForm('image', file, options, 'photo');
    return answer(await this.api.POST('/v1/images', { body: form as never, signal: options.signal }));
  }

  /** Stores the photo at a public URL, as uploadImage does with a file. */
  async checkImageUrl(imageUrl: string, options: RequestOptions = {}): Promise<ApiImage> {
    return answer(await this.api.POST('/v1/images', { body: { image_url: imageUrl }, signal: options.signal }));
  }

  /** Stores 2 to 30 s of audio for 24 hours (POST /v1/audio); create with its `id` as `audio_id`. */
  async uploadAudio(file: FileInput, options: RequestOptions & FileOptions = {}): Promise<ApiAudio> {
    const form = await fileForm('audio', file, options, 'audio');
    return answer(await this.api.POST('/v1/audio', { body: form as never, signal: options.signal }));
  }

  /** Speech in one of listVoices' voices (at most 500 characters), stored as audio like uploadAudio. */
  async createSpeech(speech: { text: string; voice_id: string }, options: RequestOptions = {}): Promise<ApiAudio> {
    return answer(await this.api.POST('/v1/audio', { body: speech, signal: options.signal }));
  }

  /** The soundtrack of a public short video (its first 30 s), stored as audio like uploadAudio. */
  async extractSoundtrack(videoUrl: string, options: RequestOptions = {}): Promise<ApiAudio> {
    return answer(await this.api.POST('/v1/audio', { body: { video_url: videoUrl }, signal: options.signal }));
  }

  async listVoices(options: RequestOptions = {}): Promise<Voice[]> {
    return answer(await this.api.GET('/v1/voices', { signal: options.signal })).data;
  }

  /**
   * Registers an HTTPS endpoint for `events` (default: all video events). The answer's `secret` (`whsec_…`),
   * shown only here, is what verifyWebhook checks deliveries with.
   */
  async createWebhook(webhook: { url: string; events?: WebhookEvent }, options: RequestOptions = {}): Promise<CreatedWebhookEndpoint> {
    return answer(await this.api.POST('/v1/webhooks', { body: webhook, signal: options.signal }));
  }

  async listWebhooks(options: RequestOptions = {}): Promise<WebhookEndpoint[]> {
    return answer(await this.api.GET('/v1/webhooks', { signal: options.signal })).data;
  }

  async getWebhook(id: string, options: RequestOptions = {}): Promise<WebhookEndpoint> {
    return answer(await this.api.GET('/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  async deleteWebhook(id: string, options: RequestOptions = {}): Promise<void> {
    answer(await this.api.DELETE('/v1/webhooks/{id}', { params: { path: { id } }, signal: options.signal }));
  }

  /** A new secret, answered once; the old one keeps signing beside it for `overlapSeconds` (the service's default: 24 hours). */
  async rotateWebhookSecret(id: string, options: RequestOptions & { overlapSeconds?: number } = {}): Promise<CreatedWebhookEndpoint> {
    const body = options.overlapSeconds === undefined ? {} : { overlap_seconds: options.overlapSeconds };
    return answer(await this.api.POST('/v1/webhooks/{id}/rotate-secret', { params: { path: { id } }, body, signal: options.signal }));
  }

  /** Turns an endpoint disabled for failing too long on again (it forgets the failure streak). */
  async enableWebhook(id: string, options: RequestOptions = {}): Promise<WebhookEndpoint> {
    return answer(await this.api.POST('/v1/webhooks/{id}/enable', { params: { path: { id } }, signal: options.signal }));
  }

  /** Makes or replaces the account's default secret, which signs deliveries to a video's own `webhook_url`. */
  async rotateDefaultWebhookSecret(options: RequestOptions & { overlapSeconds?: number } = {}): Promise<DefaultWebhookSecret> {
    const body = options.overlapSeconds === undefined ? {} : { overlap_seconds: options.overlapSeconds };
    return answer(await this.api.POST('/v1/webhooks/default-secret', { body, signal: options.signal }));
  }

  /** The delivery log of an endpoint: each delivery with its attempts (status, latency, response snippet). */
  async listWebhookDeliveries(id: string, options: RequestOptions & { limit?: number } = {}): Promise<WebhookDelivery[]> {
    const query = options.limit === undefined ? {} : { limit: options.limit };
    return answer(await this.api.GET('/v1/webhooks/{id}/deliveries', { params: { path: { id }, query }, signal: options.signal })).data;
  }

  /** The delivery log of a video's own `webhook_url` (given at create), newest first. */
  async listVideoWebhookDeliveries(videoId: string, options: RequestOptions & { limit?: number } = {}): Promise<WebhookDelivery[]> {
    const query = options.limit === undefined ? {} : { limit: options.limit };
    return answer(await this.api.GET('/v1/videos/{id}/webhook-deliveries', { params: { path: { id: videoId }, query }, signal: options.signal })).data;
  }

  async redeliverWebhook(id: string, deliveryId: string, options: RequestOptions = {}): Promise<WebhookDelivery> {
    return answer(await this.api.POST('/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver', { params: { path: { id, delivery_id: deliveryId } }, signal: options.signal }));
  }

  /** Sends one signed `webhook.test` event now and answers how the endpoint took it. */
  async testWebhook(id: string, options: RequestOptions = {}): Promise<WebhookDelivery> {
    return answer(await this.api.POST('/v1/webhooks/{id}/test', { params: { path: { id } }, signal: options.signal }));
  }

  /**
   * Resolves with the video once `completed`; rejects with VideoFailedError (the video's error code) once
   * `failed`, WaitTimeoutError after `timeoutMs`, or the signal's reason when it aborts. Any other status, an
   * unknown one included, is not terminal. Each read asks the service to hold it until the video is done
   * (`Prefer: wait=N`); a service that does not (no `Preference-Applied`) is read every pollIntervalMs.
   * Retryable errors (429 and 503 with their Retry-After) are waited out within the timeout.
   */
  async waitForVideo(id: string, options: WaitOptions = {}): Promise<ApiVideo> {
    const timeout = AbortSignal.timeout(options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS);
    const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
    const deadline = Date.now() + (options.timeoutMs ?? DEFAULT_WAIT_TIMEOUT_MS);
    let video: ApiVideo | undefined;
    try {
      for (;;) {
        const started = Date.now();
        const waitSeconds = Math.min(MAX_WAIT_SECONDS, Math.floor((deadline - started) / 1000));
        let held = false;
        try {
          const read = await this.api.GET('/v1/videos/{id}', {
            params: { path: { id } },
            headers: waitSeconds > 0 ? { Prefer: `wait=${waitSeconds}` } : {},
            signal,
          });
          video = answer(read);
          held = /\bwait\b/i.test(read.response.headers.get('preference-applied') ?? '');
        } catch (error) {
          if (!(error instanceof PetsingError && error.retryable)) throw error;
          await sleep(Math.max((error.retryAfterSeconds ?? 0) * 1000, this.pollIntervalMs), signal);
          continue;
        }
        if (video.status === 'completed') return video;
        if (video.status === 'failed') throw new VideoFailedError(video);
        options.onUpdate?.(video);
        await sleep(held ? Math.max(0, MIN_READ_GAP_MS - (Date.now() - started)) : this.pollIntervalMs, signal);
      }
    } catch (error) {
      if (timeout.aborted && !options.signal?.aborted) throw new WaitTimeoutError(id, video);
      throw error;
    }
  }

  /**
   * The video's states as they change (GET /v1/videos/{id}/events, Server-Sent Events): its current one, then
   * every change, ending after `completed` or `failed` (or at once when `lastEventId` is already past them). A
   * stream that drops is resumed with Last-Event-ID after the server's `retry` delay, so no state comes twice;
   * abort the signal (or leave the loop) to stop. Error answers throw PetsingError.
   */
  async *videoEvents(id: string, options: VideoEventOptions = {}): AsyncGenerator<VideoEvent> {
    let lastEventId = options.lastEventId ?? 0;
    let reconnectMs = DEFAULT_RECONNECT_MS;
    for (;;) {
      const read = await this.api.GET('/v1/videos/{id}/events', {
        params: { path: { id } },
        headers: { Accept: 'text/event-stream', ...(lastEventId > 0 ? { 'Last-Event-ID': String(lastEventId) } : {}) },
        parseAs: 'stream',
        signal: options.signal,
      });
      if (read.response.status === 204) return;
      const body = answer(read);
      if (!body) throw new Error('The event stream answered without a body.');
      try {
        for await (const event of serverSentEvents(body, (ms) => (reconnectMs = ms))) {
          if (event.event !== 'video.status') continue;
          const video = JSON.parse(event.data) as ApiVideo;
          if (event.id !== undefined && /^\d+$/.test(event.id)) lastEventId = Number(event.id);
          yield { eventId: lastEventId, video };
          if (video.status === 'completed' || video.status === 'failed') return;
        }
      } catch (error) {
        // A dropped connection resumes below; an abort or a malformed event does not.
        if (options.signal?.aborted || error instanceof SyntaxError) throw error;
      }
      await sleep(reconnectMs, options.signal);
    }
  }
}

/** The data of a success, or the PetsingError of a failure. */
function answer<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (!result.response.ok) throw PetsingError.of(result.response, result.error);
  return result.data as T;
}
