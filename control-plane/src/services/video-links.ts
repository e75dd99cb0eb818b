import type { ObjectStore } from '@petsing/platform/storage';
import type { Video } from '../db/schema.ts';
import { ExpiringCache } from './notified-cache.ts';

/**
 * The share of DOWNLOAD_URL_TTL_SECONDS for which a signed download link is answered again: every link
 * handed out stays good for at least the rest (55 of the default 60 minutes).
 */
const LINK_REUSE_SHARE = 1 / 12;

/** Signs the download links of finished videos, for every surface that shows one (API, web app, webhooks). */
export class VideoLinks {
  private readonly signedLinks = new ExpiringCache<string>();

  constructor(
    private readonly objects: Pick<ObjectStore, 'downloadUrl'>,
    private readonly downloadUrlTtlSeconds: number,
  ) {}

  /**
   * Expiring download links of a finished video's MP4 and thumbnail; null until it has them. A link is answered
   * again during the first LINK_REUSE_SHARE of its lifetime (presigning costs CPU on every poll).
   */
  async of(video: Video): Promise<{ videoUrl: string | null; thumbnailUrl: string | null }> {
    const link = async (key: string | null, fileName: string) => {
      if (!key || video.status !== 'completed') return null;
      const reuseKey = `${key}\n${fileName}`;
      const reused = this.signedLinks.get(reuseKey);
      if (reused) return reused;
      const url = await this.objects.downloadUrl(key, { expiresInSeconds: this.downloadUrlTtlSeconds, fileName });
      this.signedLinks.set(reuseKey, url, this.signedLinks.now() + this.downloadUrlTtlSeconds * 1000 * LINK_REUSE_SHARE);
      return url;
    };
    const [videoUrl, thumbnailUrl] = await Promise.all([
      link(video.output_key, `petsing-${video.id}.mp4`),
      link(video.thumbnail_key, `petsing-${video.id}.jpg`),
    ]);
    return { videoUrl, thumbnailUrl };
  }
}
