import type { ObjectStore } from '@petsing/platform/storage';
import { AppError } from '../errors/app-error.ts';
import type { UserUrlFetcher } from './safe-fetch.ts';
import { UrlRefusedError } from './url-refusal.ts';

const IMAGE_URL_MAX_BYTES = 15 * 1024 * 1024;

const extensionOf: Record<string, string> = {
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
  'image/heic': 'heic',
  'image/heif': 'heif',
};

/**
 * The public API's image_url: vetted when the video is created (a refused host answers 400 before any
 * credit is spent), fetched into the object store when the render workflow needs it (VideoRenderService
 * records the key; a refused download fails the video and refunds). Bytes only: no video, no database.
 */
export class ImageUrlImporter {
  constructor(
    private readonly fetcher: UserUrlFetcher,
    private readonly objects: ObjectStore,
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

  /**
   * Downloads the photo at `url` and stores it as `keyStem` plus its format's extension; returns the key.
   * A refused or failed download throws the fetcher's UrlRefusedError.
   */
  async store(url: string, keyStem: string): Promise<string> {
    const photo = await this.fetch(url);
    const key = `${keyStem}.${photo.extension}`;
    await this.objects.put(key, photo.body, { contentType: photo.contentType });
    return key;
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
