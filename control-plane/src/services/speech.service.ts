import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { withScratchDirectory } from '@petsing/platform/tools';
import { SCRATCH_FOLDERS } from '../media/scratch-folders.ts';
import { MAX_SPEECH_CHARACTERS } from '@petsing/workflows/api-rules';
import { ObjectNotFoundError, type GetResult, type ObjectStore } from '@petsing/platform/storage';
import { AppError, notFound } from '../errors/app-error.ts';
import type { Logger } from '../logging/logger.ts';
import { encodeSpeechMp3 } from '../media/speech/speech-audio.ts';
import type { SpeechProvider, SpeechVoice } from '../media/speech/speech-provider.ts';
import type { HostedAudioLink, HostedAudioService } from './hosted-audio.service.ts';

export type VoiceWithSample = SpeechVoice & { sampleUrl: string };

/** What each voice says in its sample clip, by primary language subtag; English for anything else. */
const SAMPLE_SENTENCES: Record<string, string> = {
  en: 'Hi! I am your pet, and today I am going to sing for you.',
  es: '¡Hola! Soy tu mascota, y hoy voy a cantar para ti.',
  fr: 'Bonjour ! Je suis ton animal, et aujourd’hui je vais chanter pour toi.',
  de: 'Hallo! Ich bin dein Haustier, und heute singe ich für dich.',
  it: 'Ciao! Sono il tuo animale, e oggi canterò per te.',
  pt: 'Olá! Eu sou o seu bichinho, e hoje vou cantar para você.',
};

/**
 * POST /tts and the voice list. Speech becomes hosted audio of the caller (HostedAudioService), ready for
 * POST /create-with-audio. Each voice's sample clip is synthesized the first time someone plays it and
 * kept in the object store under voices/<provider>/<voice>.mp3: lazily rather than at startup, so a start
 * never waits on (or spends the quota of) an upstream provider, and only played voices cost anything.
 */
export class SpeechService {
  /** Sample clips being made right now, so concurrent first plays of a voice share one synthesis. */
  private readonly sampleGenerations = new Map<string, Promise<void>>();

  private readonly provider: SpeechProvider;
  private readonly hostedAudio: HostedAudioService;
  private readonly objects: ObjectStore;
  private readonly baseUrl: string;
  private readonly logger: Logger;

  constructor(dependencies: {
    provider: SpeechProvider;
    hostedAudio: HostedAudioService;
    objects: ObjectStore;
    baseUrl: string;
    logger: Logger;
  }) {
    ({ provider: this.provider, hostedAudio: this.hostedAudio, objects: this.objects, baseUrl: this.baseUrl, logger: this.logger } = dependencies);
  }

  voices(): VoiceWithSample[] {
    return this.provider.voices().map((voice) => ({ ...voice, sampleUrl: `${this.baseUrl}/media/voices/${voice.id}.mp3` }));
  }

  /** Speaks `text` (trimmed, 1 to 500 characters) in the voice and stores the MP3 as the user's hosted audio. */
  async synthesize(userId: string, input: { text: string; voiceId: string }, signal?: AbortSignal): Promise<HostedAudioLink> {
    const text = input.text.trim();
    if (text === '') throw new AppError('invalid_request', 'The text is empty.', { hint: 'Send the words to speak in `text`.' });
    // Characters as people count them (code points), so an emoji counts once.
    const length = [...text].length;
    if (length > MAX_SPEECH_CHARACTERS) {
      throw new AppError('text_too_long', `The text has ${length} characters; at most ${MAX_SPEECH_CHARACTERS} are allowed.`);
    }
    const voice = this.findVoice(input.voiceId);
    if (!voice) throw new AppError('unknown_voice', `There is no voice ${JSON.stringify(input.voiceId)}.`);
    return withScratchDirectory(SCRATCH_FOLDERS.speech, async (directory) => {
      const speech = await this.speak(voice.id, text, directory, signal);
      return this.hostedAudio.store(userId, 'tts', speech.path, speech.durationSeconds);
    });
  }

  /** The voice's sample clip, synthesized on the first request and read from the object store after that. */
  async voiceSample(voiceId: string): Promise<GetResult> {
    const voice = this.findVoice(voiceId);
    if (!voice) throw notFound('This voice', { hint: 'Use a sample_url from GET /tts/voices.' });
    const key = this.sampleKey(voice.id);
    try {
      return await this.objects.get(key);
    } catch (error) {
      if (!(error instanceof ObjectNotFoundError)) throw error;
      await this.generateSampleOnce(voice);
      return this.objects.get(key);
    }
  }

  private findVoice(voiceId: string): SpeechVoice | undefined {
    return this.provider.voices().find((voice) => voice.id === voiceId);
  }

  private sampleKey(voiceId: string): string {
    return `voices/${this.provider.name}/${voiceId}.mp3`;
  }

  private generateSampleOnce(voice: SpeechVoice): Promise<void> {
    let generation = this.sampleGenerations.get(voice.id);
    if (!generation) {
      generation = this.generateSample(voice).finally(() => this.sampleGenerations.delete(voice.id));
      this.sampleGenerations.set(voice.id, generation);
    }
    return generation;
  }

  private async generateSample(voice: SpeechVoice): Promise<void> {
    const key = this.sampleKey(voice.id);
    // A request that found no sample can get here just after another one finished making it.
    if (await this.objects.exists(key)) return;
    const sentence = SAMPLE_SENTENCES[voice.language.split('-')[0]!.toLowerCase()] ?? SAMPLE_SENTENCES.en!;
    await withScratchDirectory(SCRATCH_FOLDERS.speech, async (directory) => {
      const sample = await this.speak(voice.id, sentence, directory);
      await this.objects.put(key, createReadStream(sample.path), { contentType: 'audio/mpeg' });
    });
    this.logger.info({ voice: voice.id, provider: this.provider.name }, 'stored voice sample clip');
  }

  /** Synthesizes and encodes the MP3 a video accepts (2 to 30 s). */
  private async speak(voiceId: string, text: string, directory: string, signal?: AbortSignal): Promise<{ path: string; durationSeconds: number }> {
    const speech = await this.provider.synthesize({ text, voiceId, directory, signal });
    const path = join(directory, 'final.mp3');
    try {
      return { path, ...(await encodeSpeechMp3(speech.path, path, signal)) };
    } catch (error) {
      if (signal?.aborted) throw error;
      throw new AppError('speech_unavailable', 'The synthesized speech could not be read.', { cause: error });
    }
  }
}
