import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import type { ObjectStore } from '@petsing/platform/storage';
import { MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import type { HostedAudio } from '../db/schema.ts';
import { AppError, notFound } from '../errors/app-error.ts';
import type { HostedAudioRepository } from '../repositories/hosted-audio.repository.ts';
import { removeExpiredMedia } from './expired-media-sweep.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import type { UploadChecks } from './ports/upload-checks.ts';

export type HostedAudioLink = { id: string; url: string; durationSeconds: number; expiresAt: Date };

/** How long hosted audio can be named in a create (audio_id, audio_url), like a checked photo. */
const HOSTED_AUDIO_RETENTION_MS = 24 * 3600 * 1000;

const uuid = z.uuid();

/**
 * Audio the service holds for a user (speech, extracted soundtracks, uploads to POST /v1/audio), stored as
 * MP3 and served at {base_url}/media/audio/{id}.mp3. The id is a random UUID, so the link can be played
 * without a credential; creating a video from it (`audio_url` of POST /create-with-audio, `audio_id` of
 * POST /v1/videos) is allowed to its owner only, for HOSTED_AUDIO_RETENTION_MS.
 */
export class HostedAudioService {
  constructor(
    private readonly repository: HostedAudioRepository,
    private readonly objects: ObjectStore,
    private readonly baseUrl: string,
    private readonly normalizeAudio: UploadChecks['normalizeAudio'],
  ) {}

  /** POST /v1/audio with a file: measured and made MP3 like a web create's audio, then hosted for the user. */
  async storeUpload(userId: string, file: ReceivedFile): Promise<HostedAudioLink> {
    const mp3 = await this.normalizeAudio(file);
    return this.store(userId, 'upload', mp3.path, mp3.durationSeconds);
  }

  /** Stores a finished MP3 file from local disk for the user and returns its hosted link. */
  async store(userId: string, source: HostedAudio['source'], mp3Path: string, durationSeconds: number): Promise<HostedAudioLink> {
    const id = randomUUID();
    const key = `hosted-audio/${id}.mp3`;
    await this.objects.put(key, createReadStream(mp3Path), { contentType: 'audio/mpeg' });
    try {
      const expiresAt = new Date(Date.now() + HOSTED_AUDIO_RETENTION_MS);
      await this.repository.insert({ id, user_id: userId, source, object_key: key, duration_ms: Math.max(1, Math.round(durationSeconds * 1000)), expires_at: expiresAt });
      return { id, url: this.url(id), durationSeconds, expiresAt };
    } catch (error) {
      await this.objects.delete(key).catch(() => {});
      throw error;
    }
  }

  url(id: string): string {
    return `${this.baseUrl}/media/audio/${id}.mp3`;
  }

  /** The caller's hosted audio that `url` points at; undefined for any other URL or another user's audio. */
  async findOwnedByUrl(userId: string, url: string): Promise<HostedAudio | undefined> {
    const prefix = `${this.baseUrl}/media/audio/`;
    if (!url.startsWith(prefix) || !url.endsWith('.mp3')) return undefined;
    const id = url.slice(prefix.length, -'.mp3'.length);
    return uuid.safeParse(id).success ? this.repository.findOwned(id, userId) : undefined;
  }

  /**
   * The caller's hosted audio named by `audio_id`, ready to sing: another account's id is as unknown as a
   * missing one (404), an expired one is refused with audio_expired.
   */
  async usable(userId: string, id: string, now = new Date()): Promise<HostedAudio> {
    const audio = uuid.safeParse(id).success ? await this.repository.findOwned(id, userId) : undefined;
    if (!audio) throw new AppError('unknown_audio', `There is no audio ${id} for this account.`);
    return assertSingable(audio, 'audio_id', now);
  }

  /**
   * GET /media/audio/{id}.mp3: the stored MP3 of any hosted audio (the random id is the only credential);
   * not_found for an unknown or malformed id.
   */
  async open(id: string) {
    const audio = uuid.safeParse(id).success ? await this.repository.findById(id) : undefined;
    if (!audio) throw notFound('This audio');
    return this.objects.get(audio.object_key);
  }

  /**
   * Removes expired audio, its link with it (a video made from it keeps its own copy); returns how many
   * (startExpiredMediaSweep runs it hourly in the control worker).
   */
  sweepExpired(now = new Date()): Promise<number> {
    return removeExpiredMedia(this.repository, this.objects, now);
  }
}

/**
 * Hosted audio a create may use: not expired, and long enough to sing (it was measured when stored;
 * longer audio is cut at 30 s like every render). `named` is the request field, for the message.
 */
export function assertSingable(audio: HostedAudio, named: string, now = new Date()): HostedAudio {
  if (audio.expires_at <= now) {
    throw new AppError('audio_expired', `The audio named by ${named} expired at ${audio.expires_at.toISOString()}.`);
  }
  if (audio.duration_ms < MIN_AUDIO_SECONDS * 1000) {
    throw new AppError('audio_duration_out_of_range', `The audio named by ${named} lasts ${(audio.duration_ms / 1000).toFixed(1)} seconds; at least ${MIN_AUDIO_SECONDS} are needed.`);
  }
  return audio;
}
