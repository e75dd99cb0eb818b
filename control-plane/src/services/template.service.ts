import { availableParallelism } from 'node:os';
import { buffer } from 'node:stream/consumers';
import sharp from 'sharp';
import { samplePetSvg } from '@petsing/workflows/media';
import type { ObjectStore } from '@petsing/platform/storage';
import type { Template } from '../db/schema.ts';
import { notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import type { TemplateRepository } from '../repositories/template.repository.ts';
import { templateCatalog, type TemplateDefinition } from '../templates/template-catalog.ts';
import { buildTemplateAssets } from '../templates/template-assets.ts';
import type { RenderScheduling } from './ports/render-scheduling.ts';
import { SAMPLE_PET_KEY, templateObjectKeys, type TemplateAsset } from '../templates/template-objects.ts';
import type { AudioPreparer } from '../media/audio-preparer.ts';
import type { KeptTemplateSongs } from '../templates/kept-template-songs.ts';

export class TemplateService {
  /** The seeding started by seedInBackground, which every template request waits for. */
  private seeding: Promise<unknown> = Promise.resolve();
  /** Set while the last background seeding has failed: the next template request starts it again. */
  private seedAgain: (() => void) | undefined;

  constructor(
    private readonly templates: TemplateRepository,
    private readonly objects: ObjectStore,
    private readonly audio: AudioPreparer,
    /** Songs made by the same code for another database on this machine (none: every seeding makes its own). */
    private readonly kept?: KeptTemplateSongs,
  ) {}

  /**
   * Seeds without holding the caller up (an API's first start serves while the songs build): template requests wait
   * for it, so nobody sees, or caches for an hour, a partial list. Answers once it is done, successfully or not; a
   * failure is logged, and the next template request tries again.
   */
  seedInBackground(logger: Logger, stop?: AbortSignal): Promise<void> {
    this.seedAgain = undefined;
    const seeding = this.seed(logger, stop);
    this.seeding = seeding;
    return seeding.then(
      ({ created, kept }) => {
        if (created + kept < templateCatalog.length) logger.info({ created }, 'template songs stopped with the service; the next start builds the rest');
        else if (created > 0) logger.info({ created }, 'template songs ready');
      },
      (error: unknown) => {
        logger.error({ err: error }, 'could not build the template songs; the next template request tries again');
        this.seedAgain = () => void this.seedInBackground(logger);
      },
    );
  }

  private async seeded(): Promise<void> {
    this.seedAgain?.();
    await this.seeding;
  }

  async list(): Promise<Template[]> {
    await this.seeded();
    return this.templates.listOldestFirst();
  }

  /** Queues the preview clip of every template that has none of the current version yet (once per template and version: the workflow id is fixed). */
  async schedulePreviews(scheduler: RenderScheduling): Promise<number> {
    const missing = (await this.templates.listOldestFirst()).filter((template) => template.preview_video_key !== templateObjectKeys(template.id).previewVideo);
    for (const template of missing) await scheduler.startTemplatePreview(template.id);
    return missing.length;
  }

  /** Looks a template up by its public id, a numeric string. */
  async find(publicId: string): Promise<Template | undefined> {
    if (!/^[1-9][0-9]{0,8}$/.test(publicId)) return undefined;
    await this.seeded();
    return this.templates.findById(Number(publicId));
  }

  /** GET /media/templates/{id}/{asset}: the stored song or preview of a template; not_found while it has none (or no such template). */
  async media(publicId: string, asset: TemplateAsset) {
    const template = await this.find(publicId);
    const key = template && this.assetKey(template, asset);
    if (!key) throw notFound(`Template media ${publicId}/${asset}`);
    return this.objects.get(key);
  }

  private assetKey(template: Template, asset: TemplateAsset): string | null {
    switch (asset) {
      case 'audio':
        return template.audio_key;
      case 'preview-image':
        return template.preview_image_key;
      case 'preview-video':
        return template.preview_video_key;
    }
  }

  /**
   * Makes sure every catalogue template exists with its songs and preview still (answers how many it built and how
   * many were there). Idempotent: a template whose row and objects are already there is left alone, so restarts are
   * cheap. `stop` ends it after the songs being built: a service stopping during its first start waits for those only.
   */
  async seed(logger: Logger, stop?: AbortSignal): Promise<{ created: number; kept: number }> {
    if (!(await this.objects.exists(SAMPLE_PET_KEY))) {
      await this.objects.put(SAMPLE_PET_KEY, await sharp(Buffer.from(samplePetSvg())).png().toBuffer(), { contentType: 'image/png' });
    }
    // A first start builds every song (ffmpeg, a second each): one lane per core.
    const queue = [...templateCatalog];
    let created = 0;
    let kept = 0;
    const lane = async () => {
      for (let definition = queue.shift(); definition && !stop?.aborted; definition = queue.shift()) {
        if (await this.seedOne(definition)) {
          created++;
          logger.info({ templateId: definition.id, song: definition.name }, 'seeded template');
        } else {
          kept++;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(availableParallelism(), queue.length) }, lane));
    return { created, kept };
  }

  /** Builds one catalogue template unless its row and objects are there already; answers whether it did. */
  private async seedOne(definition: TemplateDefinition): Promise<boolean> {
    const id = Number(definition.id);
    const keys = templateObjectKeys(id);
    const existing = await this.templates.findById(id);
    if (
      existing?.name === definition.name &&
      existing.audio_key === keys.audio &&
      existing.prepared_audio_key === keys.preparedAudio &&
      (await this.objects.exists(keys.audio)) &&
      (await this.objects.exists(keys.previewImage)) &&
      (await this.objects.exists(keys.mouthTrack)) &&
      (await this.objects.exists(keys.preparedAudio)) &&
      (await this.objects.exists(keys.deliveryAudio))
    ) {
      return false;
    }
    const row = { id, name: definition.name, description: definition.description, audio_key: keys.audio, preview_image_key: keys.previewImage };
    // The songs this machine made for another database, by the same code: copied rather than made again.
    const kept = await this.kept?.get(id);
    if (kept) {
      for (const { key, body, contentType } of kept.objects) await this.objects.put(key, body, { contentType });
      await this.templates.upsert({ ...row, audio_duration_ms: kept.audioDurationMs });
      await this.templates.setPreparedAudio(id, keys.preparedAudio, kept.preparedAudioMs);
      return true;
    }
    const assets = await buildTemplateAssets(definition);
    const made = [
      { key: keys.audio, body: assets.audio, contentType: assets.audioContentType },
      { key: keys.previewImage, body: assets.previewImage, contentType: assets.previewImageContentType },
      { key: keys.mouthTrack, body: assets.mouthTrack, contentType: assets.mouthTrackContentType },
      { key: keys.mix, body: assets.mix, contentType: assets.stemContentType },
      { key: keys.voice, body: assets.voice, contentType: assets.stemContentType },
    ];
    for (const { key, body, contentType } of made) await this.objects.put(key, body, { contentType });
    const audioDurationMs = Math.round(assets.durationSeconds * 1000);
    await this.templates.upsert({ ...row, audio_duration_ms: audioDurationMs });
    // Every video of this template renders the same song: prepare it once, here. The render listens to the voice alone
    // (the mouth follows the voice, and the score's keyframes, not the band: no stems to separate); the video's
    // soundtrack is the stereo mix.
    const prepared = await this.audio.prepare(keys.voice, { analysisKey: keys.preparedAudio }, undefined, 'none');
    await this.audio.prepare(keys.mix, { deliveryKey: keys.deliveryAudio }, undefined, 'none');
    const preparedAudioMs = Math.round(prepared.durationSeconds * 1000);
    await this.templates.setPreparedAudio(id, keys.preparedAudio, preparedAudioMs);
    if (this.kept) {
      const preparedObjects = await Promise.all([keys.preparedAudio, keys.deliveryAudio].map(async (key) => {
        const { body, contentType } = await this.objects.get(key);
        return { key, body: await buffer(body), contentType: contentType ?? 'application/octet-stream' };
      }));
      await this.kept.keep(id, { objects: [...made.map(({ key, body, contentType }) => ({ key, body: Buffer.from(body), contentType })), ...preparedObjects], audioDurationMs, preparedAudioMs });
    }
    return true;
  }
}
