import { randomUUID } from 'node:crypto';
import { DEFAULT_VIDEO_ASPECT, videoObjectPrefix, type FaceHints, type PhotoCheck } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/platform/storage';
import { z } from 'zod';
import type { Image, User, Video } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import { CANCELED_CODE, VIDEO_CHANGED_CHANNEL, type Refund, type VideoRepository } from '../repositories/video.repository.ts';
import type { RenderScheduling } from './ports/render-scheduling.ts';
import type { ImageUrlImporter } from '../media/image-url-importer.ts';
import { fileUpload, type MediaUpload } from '../media/uploads.ts';
import type { UploadChecks } from './ports/upload-checks.ts';
import type { VideoTransitions } from './video-transitions.ts';
import { audioStartWithin, optionsOf, apiVideoSound, apiVideoPhoto, type CreateVideoInput, type VideoOptions, type ApiVideoRequest, type WebVideoPhoto, type CreatedVideo, type VideoPage, type WebVideoSound, type WebVideoRequest, type WebTemplateVideoRequest, type WebAudioVideoRequest } from './video-requests.ts';
import type { WebhookService } from './webhook.service.ts';
import { CREDITS_PER_VIDEO, FREE_CREDITS_PER_VIDEO } from '../domain/pricing.ts';
import { noMetrics, type Metrics, type VideoSurface } from './ports/metrics.ts';
import type { Listen, NotifiedCache } from './notified-cache.ts';
import { assertSingable, type HostedAudioService } from './hosted-audio.service.ts';
import type { ImageService } from './image.service.ts';
import type { TemplateService } from './template.service.ts';
import { freeCreditMonth, freeCreditsNow, isSubscribed, nextFreeCreditReset } from './user.service.ts';

const uuid = z.uuid();

export class VideoService {
  private readonly videos: VideoRepository;
  private readonly transitions: VideoTransitions;
  private readonly objects: ObjectStore;
  private readonly scheduler: RenderScheduling;
  private readonly logger: Logger;
  private readonly templates: TemplateService;
  private readonly imageUrls: ImageUrlImporter;
  private readonly images: ImageService;
  private readonly hostedAudio: HostedAudioService;
  private readonly uploads: UploadChecks;
  private readonly recent: NotifiedCache<Video>;
  private readonly webhookUrls: Pick<WebhookService, 'vetVideoWebhookUrl'>;
  private readonly metrics: Metrics;

  constructor(dependencies: {
    videos: VideoRepository;
    transitions: VideoTransitions;
    objects: ObjectStore;
    scheduler: RenderScheduling;
    logger: Logger;
    templates: TemplateService;
    imageUrls: ImageUrlImporter;
    images: ImageService;
    hostedAudio: HostedAudioService;
    uploads: UploadChecks;
    /** This process's copy of recently read videos, forgotten as the database announces changes. */
    recent: NotifiedCache<Video>;
    /** Vets an API create's webhook_url before anything is paid. */
    webhookUrls: Pick<WebhookService, 'vetVideoWebhookUrl'>;
    /** Counts creates, the credits they spend and the poll path's cache hits; default: nothing. */
    metrics?: Metrics;
  }) {
    ({
      videos: this.videos, transitions: this.transitions, objects: this.objects, scheduler: this.scheduler, logger: this.logger, templates: this.templates,
      imageUrls: this.imageUrls, images: this.images, hostedAudio: this.hostedAudio, uploads: this.uploads, recent: this.recent, webhookUrls: this.webhookUrls,
    } = dependencies);
    this.metrics = dependencies.metrics ?? noMetrics;
  }

  /** Forgets videos changed anywhere (any replica, worker or SQL) as the database announces them. */
  followChanges(listen: Listen): Promise<() => Promise<void>> {
    return this.recent.follow(listen, VIDEO_CHANGED_CHANNEL, (videoId) => [videoId]);
  }

  /**
   * POST /v1/videos and the create_video tool (`surface` says which): an API video from a template song or the
   * caller's audio (POST /v1/audio) and a photo, paid with one credit. The sound is found first; then the photo: a
   * checked photo or a photo URL without a pet face is refused before any charge unless the person points at the mouth.
   */
  async createApiVideo(userId: string, request: ApiVideoRequest, surface: Extract<VideoSurface, 'api' | 'mcp'>): Promise<CreatedVideo> {
    if (request.webhook_url) await this.webhookUrls.vetVideoWebhookUrl(userId, request.webhook_url);
    const input = { sound: apiVideoSound(request), photo: apiVideoPhoto(request), face: request.face, aspect: request.aspect };
    const sound = 'templateId' in input.sound
      ? { templateId: (await this.findTemplate(input.sound.templateId)).id }
      : await this.heldAudio(userId, input.sound.audioId, request.audio_start_seconds);
    if (request.audio_start_seconds !== undefined && 'templateId' in sound) {
      throw new AppError('audio_start_out_of_range', 'audio_start_seconds picks where in your audio (audio_id) the video begins; a template song has none.');
    }
    const image = 'url' in input.photo
      ? await this.urlPhoto(userId, input.photo.url, input.face)
      : await this.heldPhoto(userId, input.photo.imageId, input.face);
    const created = await this.create({
      userId,
      origin: 'api',
      surface,
      charge: { kind: 'api_credit' },
      watermark: false,
      ...sound,
      image,
      ...(input.face ? { face: input.face } : {}),
      ...(input.aspect ? { aspect: input.aspect } : {}),
      ...(request.deadline_seconds ? { deadlineSeconds: request.deadline_seconds } : {}),
      ...(request.webhook_url ? { webhookUrl: request.webhook_url } : {}),
    });
    if (!created) {
      const balance = await this.videos.creditBalance(userId);
      throw new AppError('insufficient_credits', `Creating a video costs ${CREDITS_PER_VIDEO} credit and the balance is ${balance}.`, {
        details: { credit_balance: balance, credits_required: CREDITS_PER_VIDEO },
      });
    }
    return created;
  }

  /**
   * POST /create-with-template. Refusals that need no decoding come first (the template, the face and aspect
   * fields, the payment), so nothing is decoded or stored for a request that fails anyway; then the photo is
   * decoded, then the video is created.
   */
  async createWebVideoWithTemplate(user: User, request: WebTemplateVideoRequest, now = new Date()): Promise<CreatedVideo> {
    const { id: templateId } = await this.findTemplate(request.templateId, 'Use an id from GET /templates, exactly as given.');
    const options = optionsOf(request);
    this.assertCanPayForWebVideo(user, now);
    const photo = await this.webPhotoOf(request);
    return this.createWebVideo(user, { templateId }, photo, options, now);
  }

  /**
   * POST /create-with-audio: refused as cheaply as a template create, then the photo is decoded, then the sound
   * is checked (an upload measured and made MP3, or the caller's hosted audio found), then the video is created.
   */
  async createWebVideoWithAudio(user: User, request: WebAudioVideoRequest, now = new Date()): Promise<CreatedVideo> {
    const options = optionsOf(request);
    this.assertCanPayForWebVideo(user, now);
    const photo = await this.webPhotoOf(request);
    const { sound, seconds } = 'file' in request.sound
      ? await this.uploads.normalizeAudio(request.sound.file).then((audio) => ({ sound: { audio }, seconds: audio.durationSeconds }))
      : await this.hostedSound(user, request.sound.url);
    return this.createWebVideo(user, sound, photo, { ...options, ...audioStartWithin(request.audioStartSeconds, seconds) }, now);
  }

  /**
   * Stores the inputs, inserts and pays for the video in one transaction, then queues its render.
   * Returns undefined when the payment is refused (nothing is left behind then). If the render cannot be
   * queued, the video fails at once and its payment is given back.
   */
  async create(input: CreateVideoInput): Promise<CreatedVideo | undefined> {
    // Refused with nothing in the ledger while the render queue is away (a Temporal that restarts).
    if (!(await this.scheduler.reachable())) throw renderQueueUnavailable();
    const id = randomUUID();
    const prefix = videoObjectPrefix(id);
    try {
      let imageKey: string | null = null;
      if ('upload' in input.image) imageKey = await this.store(`${prefix}image.${input.image.upload.extension}`, input.image.upload);
      if ('key' in input.image) imageKey = await this.copy(input.image.key, `${prefix}image${extensionOf(input.image.key)}`);
      let audioKey: string | null = null;
      if (input.audio && 'upload' in input.audio) audioKey = await this.store(`${prefix}audio.${input.audio.upload.extension}`, input.audio.upload);
      if (input.audio && 'key' in input.audio) audioKey = await this.copy(input.audio.key, `${prefix}audio-source`);

      const created = await this.videos.insertPaid(
        {
          id,
          user_id: input.userId,
          origin: input.origin,
          payment: input.charge.kind,
          template_id: input.templateId ?? null,
          status: input.origin === 'api' ? 'processing' : 'pending',
          image_key: imageKey,
          source_image_url: 'url' in input.image ? input.image.url : null,
          audio_key: audioKey,
          audio_id: input.audio && 'hostedAudioId' in input.audio ? (input.audio.hostedAudioId ?? null) : null,
          has_watermark: input.watermark,
          face_hints: input.face ? JSON.stringify(input.face) : null,
          photo_check: 'check' in input.image && input.image.check ? JSON.stringify(input.image.check) : null,
          aspect: input.aspect ?? DEFAULT_VIDEO_ASPECT,
          webhook_url: input.webhookUrl ?? null,
          audio_start_seconds: input.audioStartSeconds ?? null,
        },
        input.charge,
      );
      if (!created) {
        await this.objects.deletePrefix(prefix);
        return undefined;
      }
      this.metrics.videoCreated(input.surface ?? input.origin);
      if (input.charge.kind === 'api_credit') this.metrics.creditsSpent('api_credit', CREDITS_PER_VIDEO);
      if (input.charge.kind === 'free_credit') this.metrics.creditsSpent('free_credit', FREE_CREDITS_PER_VIDEO);
      await this.queue(created.video, input.deadlineSeconds);
      return created;
    } catch (error) {
      await this.objects.deletePrefix(prefix).catch(() => {});
      throw error;
    }
  }

  /**
   * The caller's video as this process last read it, unless the database has announced a change since (a
   * poll costs no query then); a change made elsewhere shows once its notification arrives, milliseconds
   * after the commit. Waits that must see every change read with `getLatest`.
   */
  async get(userId: string, videoId: string): Promise<Video | undefined> {
    const known = this.recent.get(videoId);
    this.metrics.pollCache(known ? 'hit' : 'miss');
    if (known) return known.user_id === userId ? known : undefined;
    const mark = this.recent.mark();
    const video = await this.getLatest(userId, videoId);
    if (video) this.recent.put(video.id, video, mark);
    return video;
  }

  /** The caller's video; another user's is answered not_found like a missing one. Ids are parsed by the caller (a uuid). */
  async getOwned(userId: string, videoId: string): Promise<Video> {
    const video = await this.get(userId, videoId);
    if (!video) throw notFound(`Video ${videoId}`);
    return video;
  }

  getLatest(userId: string, videoId: string): Promise<Video | undefined> {
    return this.videos.findOwned(videoId, userId);
  }

  /** Any account's video, for the operator CLI (`petsing videos show`). */
  async findForOperator(videoId: string): Promise<Video> {
    const video = await this.videos.findById(videoId);
    if (!video) throw notFound(`Video ${videoId}`);
    return video;
  }

  list(userId: string, options: { limit: number; offset?: number }): Promise<Video[]> {
    return this.videos.listOwned(userId, options);
  }

  /** One page of the caller's videos, newest first, with how many there are in all. */
  async page(userId: string, page: number, pageSize: number): Promise<VideoPage> {
    const [videos, total] = await Promise.all([this.videos.listOwned(userId, { limit: pageSize, offset: (page - 1) * pageSize }), this.videos.countOwned(userId)]);
    return { videos, page, pageSize, total };
  }

  /**
   * Deletes a video of the caller: stops its render, removes the row and every stored object. The credit
   * it cost is not given back. Another user's video is indistinguishable from a missing one. A database
   * or storage failure answers delete_failed.
   */
  async delete(userId: string, videoId: string): Promise<void> {
    const video = await this.videos.findOwned(videoId, userId);
    if (!video) throw notFound(`Video ${videoId}`);
    await this.scheduler.cancel(videoId).catch((error: unknown) => {
      // The workflow notices on its own: every later step finds the video gone and removes its objects.
      this.logger.warn({ err: error, videoId }, 'could not cancel the render of a deleted video');
    });
    // Files first, so a failure leaves the row for a retry to find; then once more after the row is gone, for
    // anything a finishing render stored in between.
    try {
      await this.objects.deletePrefix(videoObjectPrefix(videoId));
      await this.videos.delete(videoId);
      this.recent.forget([videoId]);
      await this.objects.deletePrefix(videoObjectPrefix(videoId));
    } catch (error) {
      throw new AppError('delete_failed', `Video ${videoId} could not be deleted completely.`, { cause: error });
    }
  }

  /**
   * POST /v1/videos/{id}/cancel: stops the render of the caller's video; it ends `failed` with code `canceled`
   * and what it cost is given back (exactly once, whatever the render had done: a canceled video never
   * delivers anything). Canceling a failed video answers it as it is; a completed one is refused (409).
   */
  async cancel(userId: string, videoId: string): Promise<Video> {
    if (!(await this.videos.findOwned(videoId, userId))) throw notFound(`Video ${videoId}`);
    const result = await this.stop(videoId, 'Canceled by its owner.');
    if (!result) throw notFound(`Video ${videoId}`);
    if (result.outcome === 'completed') {
      throw new AppError('video_already_completed', `Video ${videoId} has completed; a completed video cannot be canceled.`);
    }
    return result.video;
  }

  /** The deadline of a video (deadline_seconds) passed: canceled like POST /v1/videos/{id}/cancel, unless it completed. */
  async cancelAtDeadline(videoId: string, deadlineSeconds: number): Promise<void> {
    await this.stop(videoId, `The video did not complete within its deadline of ${deadlineSeconds} seconds.`);
  }

  private async stop(videoId: string, reason: string) {
    const result = await this.transitions.cancel(videoId, reason);
    // The caller reads it next, perhaps before the database's notification has arrived.
    this.recent.forget([videoId]);
    if (result?.video.failure_code === CANCELED_CODE) {
      await this.scheduler.cancel(videoId).catch((error: unknown) => {
        // The video is failed and refunded already; a render that goes on finds it canceled and deletes its output.
        this.logger.warn({ err: error, videoId }, 'could not cancel the render of a canceled video');
      });
    }
    return result;
  }

  /**
   * Subscribers pay with their plan and get no watermark; everyone else spends one of this month's free
   * credits and gets a watermark. The photo's face is checked before paying unless the person pointed at the mouth.
   */
  private async createWebVideo(user: User, sound: WebVideoSound, photo: WebVideoPhoto, options: VideoOptions & { audioStartSeconds?: number }, now: Date): Promise<CreatedVideo> {
    const { face, aspect, audioStartSeconds } = options;
    const subscribed = isSubscribed(user);
    const audio = 'audio' in sound ? ('key' in sound.audio ? sound.audio : { upload: fileUpload(sound.audio) }) : undefined;
    const created = await this.create({
      userId: user.id,
      origin: 'web',
      surface: 'web',
      charge: subscribed ? { kind: 'subscription' } : { kind: 'free_credit', month: freeCreditMonth(now) },
      watermark: !subscribed,
      ...('templateId' in sound ? { templateId: sound.templateId } : {}),
      image: await this.webPhoto(user.id, photo, face),
      ...(audio ? { audio } : {}),
      ...(face ? { face } : {}),
      ...(aspect ? { aspect } : {}),
      ...(audioStartSeconds !== undefined ? { audioStartSeconds } : {}),
    });
    if (!created) throw noFreeCredits(now);
    return created;
  }

  /**
   * Refuses a web create the caller cannot pay for (no subscription, no free credit left this month)
   * before its uploads are decoded and stored. The insert still decides a race for the last credit.
   */
  private assertCanPayForWebVideo(user: User, now: Date): void {
    if (!isSubscribed(user) && freeCreditsNow(user, now) === 0) throw noFreeCredits(now);
  }

  /** The photo of a web create: an `image` file, decoded completely before it costs anything, or an `image_id`; exactly one. */
  private async webPhotoOf(request: WebVideoRequest): Promise<WebVideoPhoto> {
    const id = request.imageId;
    if (!id) {
      if (!request.image) throw new AppError('invalid_request', 'The form needs an "image" file.');
      await this.uploads.assertDecodableImage(request.image.path);
      return { upload: request.image };
    }
    if (request.image) throw new AppError('invalid_request', 'Send either an "image" file or an "image_id" field, not both.');
    if (!uuid.safeParse(id).success) throw new AppError('invalid_request', 'The "image_id" field must be the id answered by POST /images (a uuid).');
    return { imageId: id };
  }

  /** The audio_url of a web create: hosted speech or a soundtrack of the caller's own, long enough to sing; and its length. */
  private async hostedSound(user: User, url: string): Promise<{ sound: WebVideoSound; seconds: number }> {
    const hosted = await this.hostedAudio.findOwnedByUrl(user.id, url);
    if (!hosted) throw new AppError('unknown_audio_url', `"${url}" is not a hosted audio URL of this account.`);
    assertSingable(hosted, 'audio_url');
    return { sound: { audio: { key: hosted.object_key, hostedAudioId: hosted.id } }, seconds: hosted.duration_ms / 1000 };
  }

  /**
   * The audio_id of an API create: the caller's hosted audio, unexpired and long enough to sing; and the start in it
   * the caller asked for, which must leave the shortest audio a video is made from.
   */
  private async heldAudio(userId: string, audioId: string, startSeconds: number | undefined): Promise<{ audio: { key: string; hostedAudioId: string }; audioStartSeconds?: number }> {
    const hosted = await this.hostedAudio.usable(userId, audioId);
    const audio = { key: hosted.object_key, hostedAudioId: hosted.id };
    return { audio, ...audioStartWithin(startSeconds, hosted.duration_ms / 1000) };
  }

  /**
   * A photo the service holds, refused before any charge when it has no face and the person gave no mouth; the
   * video keeps its check, so the render uses the face the owner was shown.
   */
  private async heldPhoto(userId: string, imageId: string, face: FaceHints | undefined): Promise<{ key: string; check: PhotoCheck }> {
    return this.checkedPhoto(await this.images.usable(userId, imageId), face);
  }

  private checkedPhoto(image: Image, face: FaceHints | undefined): { key: string; check: PhotoCheck } {
    this.images.assertRenderable(image, face);
    return { key: image.object_key, check: this.images.photoCheckOf(image) };
  }

  /**
   * A photo URL with a mouth hint is vetted now (400 before any charge) and fetched by the render workflow;
   * without one it is fetched and checked now like POST /v1/images (and kept, so the caller can retry with
   * its image_id and a hint), since a photo with no pet must never cost a credit.
   */
  private async urlPhoto(userId: string, url: string, face: FaceHints | undefined): Promise<CreateVideoInput['image']> {
    if (face) {
      await this.imageUrls.vet(url);
      return { url };
    }
    return this.checkedPhoto(await this.images.checkUrl(userId, url), face);
  }

  /**
   * A web upload with a mouth hint is stored as it is; without one it is checked first (and kept, so the
   * web app can retry with its image_id and a hint), since the service holds it and can refuse it unpaid.
   */
  private async webPhoto(userId: string, photo: WebVideoPhoto, face: FaceHints | undefined): Promise<CreateVideoInput['image']> {
    if ('imageId' in photo) return this.heldPhoto(userId, photo.imageId, face);
    if (face) return { upload: fileUpload(photo.upload) };
    return this.checkedPhoto(await this.images.checkUpload(userId, photo.upload), face);
  }

  private async findTemplate(id: string, hint?: string) {
    const template = await this.templates.find(id);
    if (!template) throw new AppError('unknown_template', `There is no template with id "${id}".`, hint ? { hint } : {});
    return template;
  }

  private async queue(video: Video, deadlineSeconds: number | undefined): Promise<void> {
    try {
      // The deadline first: a video must not render without the timer it was promised.
      if (deadlineSeconds) await this.scheduler.startDeadline(video.id, deadlineSeconds);
      const workflowId = await this.scheduler.startRender(video.id);
      await this.videos.setWorkflowId(video.id, workflowId);
    } catch (error) {
      // The queue went away between the check and the start: the video fails and is refunded, and the message says so.
      this.logger.error({ err: error, videoId: video.id }, 'could not queue the render');
      const refund = await this.transitions.failUnqueued(video.id, { code: 'queue_unavailable', reason: 'The render could not be queued.' });
      throw new AppError('service_unavailable', `The render queue could not be reached, so video ${video.id} failed. ${refundSentence(refund)}`, {
        cause: error,
        hint: RETRY_WHEN_QUEUE_BACK,
      });
    }
  }

  private async store(key: string, upload: MediaUpload): Promise<string> {
    await this.objects.put(key, upload.body, { contentType: upload.contentType });
    return key;
  }

  private async copy(sourceKey: string, targetKey: string): Promise<string> {
    const source = await this.objects.get(sourceKey);
    await this.objects.put(targetKey, source.body, { contentType: source.contentType });
    return targetKey;
  }
}

/** ".png" of "images/<id>.png": a copied photo keeps the extension it was stored under. */
const extensionOf = (key: string) => {
  const dot = key.lastIndexOf('.');
  return dot > key.lastIndexOf('/') ? key.slice(dot) : '';
};

const RETRY_WHEN_QUEUE_BACK = 'Retry in a minute: the render queue is coming back.';
/** The Retry-After of a create refused while the render queue is away (a restarting Temporal is back within seconds). */
const QUEUE_RETRY_AFTER_SECONDS = 10;

const renderQueueUnavailable = () =>
  new AppError('service_unavailable', 'The render queue cannot be reached right now, so no video was made; nothing was charged.', {
    hint: RETRY_WHEN_QUEUE_BACK,
    headers: { 'Retry-After': String(QUEUE_RETRY_AFTER_SECONDS) },
  });

/** What a video that failed as it was queued cost in the end, as its ledger shows it: the charge and its refund. */
function refundSentence(refund: Refund | undefined): string {
  if (!refund || refund.payment === 'subscription') return 'Nothing was charged.';
  if (refund.credits === 0) return 'Its free credit was spent, and could not be given back because a new month has started.';
  if (refund.payment === 'free_credit') return 'Its free credit was spent and given back.';
  return `Its ${refund.credits} credit was charged and refunded: both entries show in the credit ledger.`;
}

const noFreeCredits = (now: Date) =>
  new AppError('no_free_credits', `This month's free credits are used up; they reset on ${nextFreeCreditReset(now).toISOString().slice(0, 10)}.`);
