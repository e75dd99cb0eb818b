import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import { DEFAULT_VIDEO_ASPECT, videoObjectPrefix, type FaceHints, type VideoAspect } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/workflows/storage';
import type { User, Video } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { Charge, VideoRepository } from '../repositories/video.repository.ts';
import type { RenderScheduler } from '../temporal/render-scheduler.ts';
import type { ImageUrlImporter } from '../media/image-url-importer.ts';
import { CREDITS_PER_VIDEO } from './credit.service.ts';
import type { ImageService } from './image.service.ts';
import type { TemplateService } from './template.service.ts';
import { freeCreditMonth, freeCreditsNow, isSubscribed, nextFreeCreditReset } from './user.service.ts';

export type MediaUpload = { body: Readable | Buffer; contentType: string; extension: string };

export type CreateVideoInput = {
  userId: string;
  origin: 'api' | 'web';
  charge: Charge;
  watermark: boolean;
  templateId?: number;
  /** A photo to store, a URL the workflow fetches, or a photo the service holds (copied, so the video keeps it). */
  image: { upload: MediaUpload } | { url: string } | { key: string };
  audio?: { upload: MediaUpload } | { key: string };
  face?: FaceHints;
  /** The output shape; square when not given. */
  aspect?: VideoAspect;
};

/** What every create surface takes besides the photo and the sound: face corrections and the output shape. */
export type VideoOptions = { face?: FaceHints; aspect?: VideoAspect };

/** The photo of an API video: a URL the render fetches, or a photo checked by POST /v1/images. */
export type ApiVideoPhoto = { url: string } | { imageId: string };

/** The photo of a web video: an uploaded file, or a photo checked by POST /images. */
export type WebVideoPhoto = { upload: LocalUpload } | { imageId: string };

export type CreatedVideo = { video: Video; creditsRemaining: number };

/** A received file on local disk (a web upload), stored under `extension` with its sniffed content type. */
export type LocalUpload = { path: string; contentType: string; extension: string };

/** What a web video sings: a template song, an uploaded audio file (MP3) or stored audio (hosted speech). */
export type WebVideoSound = { templateId: number } | { audio: LocalUpload | { key: string } };

export class VideoService {
  constructor(
    private readonly videos: VideoRepository,
    private readonly objects: ObjectStore,
    private readonly scheduler: RenderScheduler,
    private readonly logger: Logger,
    private readonly downloadUrlTtlSeconds: number,
    private readonly templates: TemplateService,
    private readonly imageUrls: ImageUrlImporter,
    private readonly images: ImageService,
  ) {}

  /**
   * POST /v1/videos: an API video from a template and a photo, paid with one credit. A photo URL is vetted
   * now (400 before any charge) and fetched by the render workflow; a checked photo without a face is
   * refused now unless the person points at the mouth.
   */
  async createApiVideo(userId: string, input: { templateId: string; photo: ApiVideoPhoto } & VideoOptions): Promise<CreatedVideo> {
    const template = await this.findTemplate(input.templateId);
    let image: CreateVideoInput['image'];
    if ('url' in input.photo) {
      await this.imageUrls.vet(input.photo.url);
      image = { url: input.photo.url };
    } else {
      image = await this.heldPhoto(userId, input.photo.imageId, input.face);
    }
    const created = await this.create({
      userId,
      origin: 'api',
      charge: { kind: 'api_credit' },
      watermark: false,
      templateId: template.id,
      image,
      ...(input.face ? { face: input.face } : {}),
      ...(input.aspect ? { aspect: input.aspect } : {}),
    });
    if (!created) {
      throw new AppError('insufficient_credits', `Creating a video costs ${CREDITS_PER_VIDEO} credit and the balance is too low.`);
    }
    return created;
  }

  /**
   * POST /create-with-template and /create-with-audio: subscribers pay with their plan and get no
   * watermark; everyone else spends one of this month's free credits and gets a watermark. The photo's
   * face is checked before paying unless the person pointed at the mouth.
   */
  async createWebVideo(user: User, sound: WebVideoSound, photo: WebVideoPhoto, options: VideoOptions = {}, now = new Date()): Promise<CreatedVideo> {
    const { face, aspect } = options;
    const subscribed = isSubscribed(user);
    const audio = 'audio' in sound ? ('key' in sound.audio ? { key: sound.audio.key } : { upload: fileUpload(sound.audio) }) : undefined;
    const created = await this.create({
      userId: user.id,
      origin: 'web',
      charge: subscribed ? { kind: 'subscription' } : { kind: 'free_credit', month: freeCreditMonth(now) },
      watermark: !subscribed,
      ...('templateId' in sound ? { templateId: sound.templateId } : {}),
      image: await this.webPhoto(user.id, photo, face),
      ...(audio ? { audio } : {}),
      ...(face ? { face } : {}),
      ...(aspect ? { aspect } : {}),
    });
    if (!created) throw noFreeCredits(now);
    return created;
  }

  /** The id of a web create's template; 400 unknown_template when there is none. */
  async webTemplateId(id: string): Promise<number> {
    return (await this.findTemplate(id, 'Use an id from GET /templates, exactly as given.')).id;
  }

  /**
   * Refuses a web create the caller cannot pay for (no subscription, no free credit left this month)
   * before its uploads are decoded and stored. The insert still decides a race for the last credit.
   */
  assertCanPayForWebVideo(user: User, now = new Date()): void {
    if (!isSubscribed(user) && freeCreditsNow(user, now) === 0) throw noFreeCredits(now);
  }

  /** Expiring download links of a finished video's MP4 and thumbnail; null until it has them. */
  async links(video: Video): Promise<{ videoUrl: string | null; thumbnailUrl: string | null }> {
    const link = (key: string | null, fileName: string) =>
      key && video.status === 'completed'
        ? this.objects.downloadUrl(key, { expiresInSeconds: this.downloadUrlTtlSeconds, fileName })
        : Promise.resolve(null);
    const [videoUrl, thumbnailUrl] = await Promise.all([
      link(video.output_key, `petsing-${video.id}.mp4`),
      link(video.thumbnail_key, `petsing-${video.id}.jpg`),
    ]);
    return { videoUrl, thumbnailUrl };
  }

  /**
   * Stores the inputs, inserts and pays for the video in one transaction, then queues its render.
   * Returns undefined when the payment is refused (nothing is left behind then). If the render cannot be
   * queued, the video fails at once and its payment is given back.
   */
  async create(input: CreateVideoInput): Promise<CreatedVideo | undefined> {
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
          has_watermark: input.watermark,
          face_hints: input.face ? JSON.stringify(input.face) : null,
          aspect: input.aspect ?? DEFAULT_VIDEO_ASPECT,
        },
        input.charge,
      );
      if (!created) {
        await this.objects.deletePrefix(prefix);
        return undefined;
      }
      await this.queue(created.video);
      return created;
    } catch (error) {
      await this.objects.deletePrefix(prefix).catch(() => {});
      throw error;
    }
  }

  get(userId: string, videoId: string): Promise<Video | undefined> {
    return this.videos.findOwned(videoId, userId);
  }

  list(userId: string, options: { limit: number; offset?: number }): Promise<Video[]> {
    return this.videos.listOwned(userId, options);
  }

  count(userId: string): Promise<number> {
    return this.videos.countOwned(userId);
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
      await this.objects.deletePrefix(videoObjectPrefix(videoId));
    } catch (error) {
      throw new AppError('delete_failed', `Video ${videoId} could not be deleted completely.`, { cause: error });
    }
  }

  /** A photo the service holds, refused before any charge when it has no face and the person gave no mouth. */
  private async heldPhoto(userId: string, imageId: string, face: FaceHints | undefined): Promise<{ key: string }> {
    const image = await this.images.usable(userId, imageId);
    this.images.assertRenderable(image, face);
    return { key: image.object_key };
  }

  /**
   * A web upload with a mouth hint is stored as it is; without one it is checked first (and kept, so the
   * web app can retry with its image_id and a hint), since the service holds it and can refuse it unpaid.
   */
  private async webPhoto(userId: string, photo: WebVideoPhoto, face: FaceHints | undefined): Promise<CreateVideoInput['image']> {
    if ('imageId' in photo) return this.heldPhoto(userId, photo.imageId, face);
    if (face) return { upload: fileUpload(photo.upload) };
    const checked = await this.images.checkUpload(userId, photo.upload);
    this.images.assertRenderable(checked, face);
    return { key: checked.object_key };
  }

  private async findTemplate(id: string, hint?: string) {
    const template = await this.templates.find(id);
    if (!template) throw new AppError('unknown_template', `There is no template with id "${id}".`, hint ? { hint } : {});
    return template;
  }

  private async queue(video: Video): Promise<void> {
    try {
      const workflowId = await this.scheduler.startRender(video.id);
      await this.videos.setWorkflowId(video.id, workflowId);
    } catch (error) {
      this.logger.error({ err: error, videoId: video.id }, 'could not queue the render');
      await this.videos.fail(video.id, { code: 'queue_unavailable', reason: 'The render could not be queued.' });
      throw new AppError('service_unavailable', 'The render queue is unavailable; nothing was charged.', { cause: error });
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

/** Opens the file only once the store reads it, so an upload refused before storing holds no descriptor. */
export function fileUpload(file: LocalUpload): MediaUpload {
  async function* chunks() {
    yield* createReadStream(file.path);
  }
  return { body: Readable.from(chunks(), { objectMode: false }), contentType: file.contentType, extension: file.extension };
}

/** ".png" of "images/<id>.png": a copied photo keeps the extension it was stored under. */
const extensionOf = (key: string) => {
  const dot = key.lastIndexOf('.');
  return dot > key.lastIndexOf('/') ? key.slice(dot) : '';
};

const noFreeCredits = (now: Date) =>
  new AppError('no_free_credits', `This month's free credits are used up; they reset on ${nextFreeCreditReset(now).toISOString().slice(0, 10)}.`);
