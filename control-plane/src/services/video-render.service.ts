import type { ObjectStore } from '@petsing/platform/storage';
import { videoObjectPrefix, type PrepareAudioInput, type PreparedAudio, type RenderPlan, type RenderStage, type TemplatePreviewPlan } from '@petsing/workflows';
import { SAMPLE_PET_FACE } from '@petsing/workflows/media';
import { SAMPLE_PET_KEY, templateObjectKeys } from '../templates/template-objects.ts';
import type { Template, Video } from '../db/schema.ts';
import type { Logger } from '../logging/logger.ts';
import { AudioRejected, type AudioPreparer, type StemPolicy } from '../media/audio-preparer.ts';
import { UrlRefusedError } from '../media/url-refusal.ts';
import type { HostedAudioRepository } from '../repositories/hosted-audio.repository.ts';
import type { TemplateRepository } from '../repositories/template.repository.ts';
import type { RenderOutput, VideoRepository } from '../repositories/video.repository.ts';
import type { VideoTransitions } from './video-transitions.ts';
import { noMetrics, type Metrics } from './ports/metrics.ts';

/**
 * Failures that are the service's own business, not the client's input: a render that failed after its retries
 * (whatever a node, ffmpeg, the model or storage threw) and the render node's model and encoder failures. Their
 * reasons can carry a tool's raw words and file paths, so the video shows this sentence instead; the log keeps the
 * reason. Every other code's reason is one of our own sentences about the photo or the audio.
 */
const INTERNAL_FAILURE_CODES: ReadonlySet<string> = new Set(['render_failed', 'model_load', 'model_contract', 'mouth_track_invalid', 'provider_unavailable', 'encoder_failed']);
const INTERNAL_FAILURE_REASON = 'The render failed on our side, not because of the photo or the audio; try again later.';

const shownFailure = (failure: { code: string; reason: string }) =>
  INTERNAL_FAILURE_CODES.has(failure.code) ? { code: failure.code, reason: INTERNAL_FAILURE_REASON } : failure;

/** A video the pipeline cannot render, ever: no retry will help. */
export class PermanentRenderFailure extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = 'PermanentRenderFailure';
  }
}

/** The video was deleted while its render was queued or running. */
export class VideoGone extends Error {
  constructor(videoId: string) {
    super(`Video ${videoId} no longer exists.`);
    this.name = 'VideoGone';
  }
}

/**
 * Fetches a photo from a user-supplied URL into the object store under `keyStem` plus its extension and
 * returns the key (the safe fetcher of the public API; a refused URL throws UrlRefusedError).
 */
export type ImageUrlStore = { store(url: string, keyStem: string): Promise<string> };

/** Told when a video finished rendering (re-renders included); lifecycle email hooks in here. */
export type VideoCompletedListener = (video: Video) => Promise<unknown>;

/**
 * The control plane's side of a render: every step is idempotent, because Temporal retries activities
 * and a retry must never duplicate a status change, a refund, an object or an event.
 */
export class VideoRenderService {
  private readonly videos: VideoRepository;
  private readonly transitions: VideoTransitions;
  private readonly templates: TemplateRepository;
  private readonly objects: ObjectStore;
  private readonly audio: AudioPreparer;
  private readonly imageUrls: ImageUrlStore;
  private readonly logger: Logger;
  private readonly onCompleted: VideoCompletedListener;
  private readonly metrics: Metrics;
  private readonly hostedAudio: Pick<HostedAudioRepository, 'findById'> | undefined;

  constructor(dependencies: {
    videos: VideoRepository;
    transitions: VideoTransitions;
    templates: TemplateRepository;
    objects: ObjectStore;
    audio: AudioPreparer;
    imageUrls: ImageUrlStore;
    logger: Logger;
    onCompleted?: VideoCompletedListener;
    /** Times the audio preparation of renders; default: nothing. */
    metrics?: Metrics;
    /** Tells text-to-speech audio (a voice alone, never separated); default: every audio is separated. */
    hostedAudio?: Pick<HostedAudioRepository, 'findById'>;
  }) {
    ({ videos: this.videos, transitions: this.transitions, templates: this.templates, objects: this.objects, audio: this.audio, imageUrls: this.imageUrls, logger: this.logger } = dependencies);
    this.onCompleted = dependencies.onCompleted ?? (async () => {});
    this.metrics = dependencies.metrics ?? noMetrics;
    this.hostedAudio = dependencies.hostedAudio;
  }

  /** The plan first: a video that cannot be rendered fails without having been announced as processing. */
  async beginRender(videoId: string): Promise<RenderPlan> {
    const video = await this.videos.findById(videoId);
    if (!video) throw new VideoGone(videoId);
    const plan = await this.plan(video, video.has_watermark);
    await this.transitions.markProcessing(videoId);
    await this.enterStage(videoId, 'preparing');
    return plan;
  }

  async beginRerender(videoId: string): Promise<RenderPlan> {
    const video = await this.transitions.markRerendering(videoId);
    if (!video) {
      const existing = await this.videos.findById(videoId);
      if (!existing) throw new VideoGone(videoId);
      throw new PermanentRenderFailure('not_rerenderable', `Video ${videoId} is ${existing.status}; only a completed video can be re-rendered.`);
    }
    await this.enterStage(videoId, 'preparing');
    return this.plan(video, false);
  }

  /**
   * The analysis copy at `targetKey`, the soundtrack at `deliveryKey` (absent: a workflow started before soundtracks
   * asks for none) and the vocal and accompaniment stems (text-to-speech, `cleanVoice`, is its own vocal stem).
   */
  async prepareAudio({ sourceAudioKey, targetKey, deliveryKey, cleanVoice, startSeconds }: PrepareAudioInput, signal?: AbortSignal): Promise<PreparedAudio> {
    const started = performance.now();
    const stems: StemPolicy = cleanVoice ? 'clean-voice' : 'separate';
    const targets = { analysisKey: targetKey, ...(deliveryKey ? { deliveryKey } : {}) };
    const prepared = await this.audio.prepare(sourceAudioKey, targets, signal, stems, startSeconds).catch((error: unknown) => {
      if (error instanceof AudioRejected && error.detail) this.logger.warn({ sourceAudioKey, code: error.code, detail: error.detail }, 'audio refused');
      throw error;
    });
    this.metrics.audioPrepared((performance.now() - started) / 1000);
    return {
      audioKey: targetKey,
      durationSeconds: prepared.durationSeconds,
      ...(prepared.startSeconds !== undefined ? { startSeconds: prepared.startSeconds } : {}),
      ...(deliveryKey ? { deliveryAudioKey: deliveryKey } : {}),
      ...(prepared.stems ? { stems: prepared.stems } : {}),
    };
  }

  async beginTemplatePreview(templateId: number): Promise<TemplatePreviewPlan> {
    const template = await this.templates.findById(templateId);
    if (!template) throw new PermanentRenderFailure('template_not_found', `Template ${templateId} does not exist.`);
    const preparedAudio = preparedSongOf(template);
    if (!preparedAudio) throw new PermanentRenderFailure('template_not_seeded', `Template ${templateId} has no prepared song yet.`);
    const keys = templateObjectKeys(templateId);
    return {
      imageKey: SAMPLE_PET_KEY,
      face: SAMPLE_PET_FACE,
      preparedAudio,
      outputKey: keys.previewVideo,
      thumbnailKey: keys.previewThumbnail,
      ...mouthTrackOf(template),
    };
  }

  completeTemplatePreview(templateId: number, outputKey: string): Promise<void> {
    return this.templates.setPreviewVideo(templateId, outputKey);
  }

  recordProgress(videoId: string, progress: number): Promise<void> {
    return this.videos.recordProgress(videoId, progress);
  }

  /** Moves the video to a later render stage (never back); the wait for a render node is timed as it ends. */
  async enterStage(videoId: string, stage: RenderStage): Promise<void> {
    const now = new Date();
    const moved = await this.videos.enterStage(videoId, stage, now);
    if (moved?.left === 'queued' && moved.since) this.metrics.renderQueueWait((now.getTime() - moved.since.getTime()) / 1000);
  }

  async complete(videoId: string, output: RenderOutput): Promise<void> {
    const result = await this.transitions.complete(videoId, output);
    // The face the owner was shown was not the one used: said once per render, beside the record on the video.
    if (result && output.face?.source.startsWith('render_')) {
      this.logger.info({ videoId, faceSource: output.face.source, faceModel: output.face.model }, 'render found the face again instead of using the photo check');
    }
    if (!result) {
      // Deleted while rendering: what the render stored must not outlive the video.
      await this.objects.deletePrefix(videoObjectPrefix(videoId));
      return;
    }
    for (const key of result.replaced) await this.objects.delete(key);
    // The video is completed either way; a failed notification must not fail (and so retry) the render.
    await this.onCompleted(result.video).catch((error: unknown) => this.logger.error({ err: error, videoId }, 'video-completed hook failed'));
  }

  async fail(videoId: string, failure: { code: string; reason: string }): Promise<void> {
    const video = await this.transitions.fail(videoId, shownFailure(failure));
    if (video) this.logger.warn({ videoId, code: failure.code, reason: failure.reason }, 'render failed');
  }

  async abandonRerender(videoId: string, failure: { code: string; reason: string }): Promise<void> {
    await this.transitions.abandonRerender(videoId, shownFailure(failure));
    this.logger.error({ videoId, code: failure.code, reason: failure.reason }, 're-render without watermark failed');
  }

  async deleteObjects(videoId: string): Promise<void> {
    await this.objects.deletePrefix(videoObjectPrefix(videoId));
  }

  private async plan(video: Video, watermark: boolean): Promise<RenderPlan> {
    const imageKey = video.image_key ?? await this.importImage(video);
    // Every render of the video (re-renders too) uses the person's corrections of the face, the face its photo check
    // found (the one the owner was shown) and its shape.
    const face = { ...(video.face_hints ? { face: video.face_hints } : {}), ...(video.photo_check ? { photoCheck: video.photo_check } : {}) };
    const { aspect } = video;
    if (video.audio_key) {
      const cleanVoice = video.audio_id !== null && (await this.hostedAudio?.findById(video.audio_id))?.source === 'tts';
      const start = video.audio_start_seconds === null ? {} : { audioStartSeconds: video.audio_start_seconds };
      return { videoId: video.id, imageKey, sourceAudioKey: video.audio_key, watermark, ...face, aspect, ...(cleanVoice ? { cleanVoice } : {}), ...start };
    }
    const template = video.template_id === null ? undefined : await this.templates.findById(video.template_id);
    if (!template) throw new PermanentRenderFailure('audio_unavailable', 'The video has no audio source.');
    const preparedAudio = preparedSongOf(template);
    return {
      videoId: video.id,
      imageKey,
      sourceAudioKey: template.audio_key,
      ...(preparedAudio ? { preparedAudio } : {}),
      watermark,
      ...face,
      aspect,
      ...mouthTrackOf(template),
    };
  }

  /** Downloads an API video's photo from its image_url into the video's objects and records its key. */
  private async importImage(video: Video): Promise<string> {
    if (!video.source_image_url) throw new PermanentRenderFailure('image_unavailable', 'The video has no photo.');
    try {
      const key = await this.imageUrls.store(video.source_image_url, `${videoObjectPrefix(video.id)}image`);
      await this.videos.setImageKey(video.id, key);
      return key;
    } catch (error) {
      if (error instanceof UrlRefusedError) throw new PermanentRenderFailure(error.code, `The photo could not be fetched: ${error.message}`);
      throw error;
    }
  }
}

/**
 * A template's song as seeding prepared it: the analysis copy (of its voice alone) and, when prepared with the current
 * assets version, its stereo soundtrack; undefined before seeding prepared it.
 */
function preparedSongOf(template: Template): PreparedAudio | undefined {
  if (!template.prepared_audio_key || !template.prepared_audio_ms) return undefined;
  const keys = templateObjectKeys(template.id);
  const current = template.prepared_audio_key === keys.preparedAudio;
  return { audioKey: template.prepared_audio_key, durationSeconds: template.prepared_audio_ms / 1000, ...(current ? { deliveryAudioKey: keys.deliveryAudio } : {}) };
}

/** A template's mouth keyframes, when its song is the one they were written for (the current assets version). */
function mouthTrackOf(template: Template): { mouthTrackKey?: string } {
  const keys = templateObjectKeys(template.id);
  return template.audio_key === keys.audio ? { mouthTrackKey: keys.mouthTrack } : {};
}
