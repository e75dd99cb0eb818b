import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { withScratchDirectory } from '@petsing/platform/tools';
import { SCRATCH_FOLDERS } from '../media/scratch-folders.ts';
import { MAX_SOURCE_AUDIO_SECONDS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { AppError } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import { MediaToolError, probeMedia, runMediaTool } from '../media/ffmpeg.ts';
import type { UserUrlFetcher } from '../media/safe-fetch.ts';
import type { FetchedUrl } from '../media/url-download.ts';
import { UrlRefusedError } from '../media/url-refusal.ts';
import { checkPlatformUrl } from '../media/social/platform-url.ts';
import {
  VideoResolveTimeoutError,
  VideoUnavailableError,
  type ResolvedVideo,
  type VideoPageResolver,
} from '../media/social/video-page-resolver.ts';
import type { HostedAudioLink, HostedAudioService } from './hosted-audio.service.ts';

/** The stored soundtrack (its hosted link and length) and the video it came from. */
export type ExtractedSoundtrack = { audio: HostedAudioLink; sourceUrl: string; title: string | null };

export interface SoundtrackSettings {
  /** Exact host names of the platform's video pages. */
  allowedHosts: readonly string[];
  /** Largest media file downloaded from the platform. */
  maxMediaBytes: number;
}

/** A whole short video arrives well within this; the fetcher's stall timeout catches a dead CDN sooner. */
const DOWNLOAD_TIMEOUT_MS = 60_000;

/**
 * POST /social/extract-audio: the soundtrack of a public short video, as hosted MP3 usable for a render.
 * The page URL must be on the platform's own hosts (checked before anything touches the network); the
 * resolver finds its media file, which is downloaded through the SSRF-safe fetcher like any user URL,
 * because the resolver's answer is only as trustworthy as the page it read.
 */
export class SoundtrackService {
  private readonly allowedHosts: ReadonlySet<string>;

  private readonly resolver: VideoPageResolver;
  private readonly fetcher: UserUrlFetcher;
  private readonly hostedAudio: HostedAudioService;
  private readonly logger: Logger;
  private readonly settings: SoundtrackSettings;

  constructor(dependencies: {
    resolver: VideoPageResolver;
    fetcher: UserUrlFetcher;
    hostedAudio: HostedAudioService;
    logger: Logger;
    settings: SoundtrackSettings;
  }) {
    ({ resolver: this.resolver, fetcher: this.fetcher, hostedAudio: this.hostedAudio, logger: this.logger, settings: this.settings } = dependencies);
    this.allowedHosts = new Set(this.settings.allowedHosts);
  }

  async extract(userId: string, pageUrl: string, signal?: AbortSignal): Promise<ExtractedSoundtrack> {
    const checked = checkPlatformUrl(pageUrl, this.allowedHosts);
    if (!checked.ok) throw new AppError('unsupported_video_url', `url is not a TikTok video link: ${checked.reason}.`);
    const sourceUrl = checked.url.href;

    const video = await this.resolve(sourceUrl, signal);
    if (video.durationSeconds !== undefined && video.durationSeconds < MIN_AUDIO_SECONDS) throw tooShort(video.durationSeconds);
    const media = await this.download(sourceUrl, video, signal);

    return withScratchDirectory(SCRATCH_FOLDERS.soundtrack, async (directory) => {
      const source = join(directory, 'source');
      const mp3 = join(directory, 'soundtrack.mp3');
      await writeFile(source, media.body);
      const durationSeconds = await this.encode(source, mp3, signal);
      const stored = await this.hostedAudio.store(userId, 'social', mp3, durationSeconds);
      // Not the hosted-audio id: it is the link's only access control, and logs are no place for credentials.
      this.logger.info({ userId, sourceUrl, durationSeconds, mediaBytes: media.body.length }, 'soundtrack extracted');
      return { audio: stored, sourceUrl, title: video.title ?? null };
    });
  }

  private async resolve(sourceUrl: string, signal?: AbortSignal): Promise<ResolvedVideo> {
    try {
      return await this.resolver.resolve(sourceUrl, signal);
    } catch (error) {
      if (error instanceof VideoUnavailableError) {
        this.logger.info({ sourceUrl, detail: error.detail }, 'video unavailable');
        throw new AppError('video_unavailable', error.message);
      }
      if (error instanceof VideoResolveTimeoutError) {
        throw new AppError('service_unavailable', error.message, { hint: 'Retry in a minute; the platform may be slow right now.' });
      }
      throw error;
    }
  }

  private async download(sourceUrl: string, video: ResolvedVideo, signal?: AbortSignal): Promise<FetchedUrl> {
    try {
      return await this.fetcher.fetch(video.mediaUrl, {
        accept: 'media',
        maxBytes: this.settings.maxMediaBytes,
        timeoutMs: DOWNLOAD_TIMEOUT_MS,
        ...(video.httpHeaders ? { headers: video.httpHeaders } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (error) {
      if (!(error instanceof UrlRefusedError)) throw error;
      // The address comes from the platform's page, so a refusal is logged: it may be an SSRF attempt.
      this.logger.warn({ sourceUrl, code: error.code, reason: error.reason }, 'video media download failed');
      switch (error.code) {
        case 'image_url_refused':
          throw new AppError('image_url_refused', `The video's file is on an address this service may not contact: ${error.message}`, {
            hint: 'Choose another video.',
          });
        case 'image_url_too_large':
          throw new AppError('video_too_large', `The video's file is too large: ${error.message}`);
        case 'image_url_unreachable':
        case 'image_url_unsupported_type':
          throw new AppError('video_unavailable', `The video's file could not be downloaded from the platform: ${error.message}`);
      }
    }
  }

  /**
   * The first soundtrack of `source`, at most MAX_SOURCE_AUDIO_SECONDS of it, as MP3; returns its length in seconds. A video
   * sings at most MAX_AUDIO_SECONDS of it: the window with the most singing, chosen when its audio is prepared.
   */
  private async encode(source: string, mp3: string, signal?: AbortSignal): Promise<number> {
    const probed = await probeMedia(source).catch(() => {
      throw new AppError('video_unavailable', "The video's file could not be read.");
    });
    if (!probed.hasAudio) throw new AppError('no_soundtrack', 'The video has no sound.');
    await runMediaTool(
      'ffmpeg',
      ['-v', 'error', '-y', '-i', source, '-map', '0:a:0', '-t', String(MAX_SOURCE_AUDIO_SECONDS), '-c:a', 'libmp3lame', '-b:a', '192k', mp3],
      signal,
    ).catch((error: unknown) => {
      if (error instanceof MediaToolError) throw new AppError('video_unavailable', "The video's sound could not be decoded.");
      throw error;
    });
    const { durationSeconds } = await probeMedia(mp3);
    if (!(durationSeconds >= MIN_AUDIO_SECONDS)) throw tooShort(durationSeconds);
    // MP3 frames round a cut up by a few tens of milliseconds; it is still the length kept.
    return Math.min(durationSeconds, MAX_SOURCE_AUDIO_SECONDS);
  }
}

function tooShort(durationSeconds: number): AppError {
  return new AppError(
    'soundtrack_too_short',
    `The video's sound lasts ${durationSeconds.toFixed(1)} s; a video needs at least ${MIN_AUDIO_SECONDS} s.`,
  );
}
