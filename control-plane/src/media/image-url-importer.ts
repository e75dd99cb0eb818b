import { videoObjectPrefix } from '@petsing/workflows';
import type { ObjectStore } from '@petsing/workflows/storage';
import type { Video } from '../db/schema.ts';
import { AppError } from '../errors/app-error.ts';
import type { VideoRepository } from '../repositories/video.repository.ts';
import { PermanentRenderFailure } from '../services/video-render.service.ts';
import { IMAGE_URL_MAX_BYTES, UrlRefusedError, type UserUrlFetcher } from './safe-fetch.ts';

const extensionOf: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/heic': 'heic',
  'image/heif': 'heif',
};

/**
 * The public API's image_url: vetted when the video is created (a refused host answers 400 before any
 * credit is spent), fetched by the render workflow (a failed download fails the video and refunds).
 */
export class ImageUrlImporter {
  constructor(
    private readonly fetcher: UserUrlFetcher,
    private readonly objects: ObjectStore,
    private readonly videos: VideoRepository,
    private readonly allowHttp: boolean,
  ) {}

  async vet(url: string): Promise<void> {
    try {
      await this.fetcher.vetHost(this.fetcher.vetUrl(url, { allowHttp: this.allowHttp }), { allowHttp: this.allowHttp });
    } catch (error) {
      if (error instanceof UrlRefusedError) {
        throw new AppError('image_url_refused', `image_url is refused: ${error.message}`, { hint: error.hint });
      }
      throw error;
    }
  }

  /** Downloads the photo into the video's objects and records its key. */
  async import(video: Video): Promise<string> {
    if (!video.source_image_url) throw new PermanentRenderFailure('image_unavailable', 'The video has no photo.');
    try {
      const photo = await this.fetch(video.source_image_url);
      const key = `${videoObjectPrefix(video.id)}image.${photo.extension}`;
      await this.objects.put(key, photo.body, { contentType: photo.contentType });
      await this.videos.setImageKey(video.id, key);
      return key;
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new PermanentRenderFailure(error.code, `The photo could not be fetched: ${error.message}`);
      throw error;
    }
  }

  /** POST /v1/images: the photo downloaded now, while the caller waits; a failed download answers 400. */
  async download(url: string): Promise<{ body: Buffer; contentType: string; extension: string }> {
    try {
      return await this.fetch(url);
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new AppError(error.code, `image_url could not be fetched: ${error.message}`, { hint: error.hint });
      throw error;
    }
  }

  private async fetch(url: string) {
    const fetched = await this.fetcher.fetch(url, { maxBytes: IMAGE_URL_MAX_BYTES, accept: 'image', allowHttp: this.allowHttp });
    return { body: fetched.body, contentType: fetched.contentType, extension: extensionOf[fetched.contentType] ?? 'bin' };
  }
}
