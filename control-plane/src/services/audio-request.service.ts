import { AppError } from '../errors/app-error.ts';
import type { HostedAudioLink } from './hosted-audio.service.ts';
import type { SoundtrackService } from './soundtrack.service.ts';
import type { SpeechService } from './speech.service.ts';

/** POST /v1/audio and the speak tools as JSON: speech from text and a voice, or the soundtrack of a short video. */
export type AudioRequest = { text?: string | undefined; voice_id?: string | undefined; video_url?: string | undefined };

/** Audio held for creates, made from a JSON request: exactly one of speech and a short video's soundtrack. */
export class AudioRequestService {
  constructor(
    private readonly speech: SpeechService,
    private readonly soundtracks: SoundtrackService,
  ) {}

  async create(userId: string, request: AudioRequest, signal?: AbortSignal): Promise<HostedAudioLink> {
    if (request.video_url !== undefined) {
      if (request.text !== undefined || request.voice_id !== undefined) {
        throw new AppError('invalid_request', 'Send either text and voice_id (speech) or video_url (a short video\'s soundtrack), not both.');
      }
      return (await this.soundtracks.extract(userId, request.video_url, signal)).audio;
    }
    if (request.text === undefined || request.voice_id === undefined) {
      throw new AppError('invalid_request', 'Send text and voice_id (speech), video_url (a short video\'s soundtrack), or an audio file as multipart/form-data.', {
        hint: 'For speech send {"text": "...", "voice_id": "<id from GET /v1/voices>"}; for a soundtrack send {"video_url": "https://www.tiktok.com/@user/video/..."}.',
      });
    }
    return this.speech.synthesize(userId, { text: request.text, voiceId: request.voice_id }, signal);
  }
}
