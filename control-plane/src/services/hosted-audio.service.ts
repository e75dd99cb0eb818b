import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { z } from 'zod';
import type { ObjectStore } from '@petsing/workflows/storage';
import type { HostedAudio } from '../db/schema.ts';
import type { HostedAudioRepository } from '../repositories/hosted-audio.repository.ts';

export type HostedAudioLink = { id: string; url: string; durationSeconds: number };

const uuid = z.uuid();

/**
 * Audio the service made for a user (speech, extracted soundtracks), stored as MP3 and served at
 * {base_url}/media/audio/{id}.mp3. The id is a random UUID, so the link can be played without a
 * credential; creating a video from it (POST /create-with-audio, `audio_url`) is allowed to its owner only.
 */
export class HostedAudioService {
  constructor(
    private readonly repository: HostedAudioRepository,
    private readonly objects: ObjectStore,
    private readonly baseUrl: string,
  ) {}

  /** Stores a finished MP3 file from local disk for the user and returns its hosted link. */
  async store(userId: string, source: HostedAudio['source'], mp3Path: string, durationSeconds: number): Promise<HostedAudioLink> {
    const id = randomUUID();
    const key = `hosted-audio/${id}.mp3`;
    await this.objects.put(key, createReadStream(mp3Path), { contentType: 'audio/mpeg' });
    try {
      await this.repository.insert({ id, user_id: userId, source, object_key: key, duration_ms: Math.max(1, Math.round(durationSeconds * 1000)) });
    } catch (error) {
      await this.objects.delete(key).catch(() => {});
      throw error;
    }
    return { id, url: this.url(id), durationSeconds };
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

  async find(id: string): Promise<HostedAudio | undefined> {
    return uuid.safeParse(id).success ? this.repository.findById(id) : undefined;
  }
}
