import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { voicedSeconds } from '@petsing/platform/audio';
import type { ObjectStore } from '@petsing/platform/storage';
import { withScratchDirectory } from '@petsing/platform/tools';
import { MAX_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { AppError } from '../errors/app-error.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import { normalizeAudioUpload } from '../media/audio-upload.ts';
import { cutWindow, windowStart } from '../media/audio-window.ts';
import { SCRATCH_FOLDERS } from '../media/scratch-folders.ts';
import { voiceOfStems } from '../media/separator/stem-voice.ts';
import type { VocalStems } from '../media/separator/vocal-stems.ts';
import { assertSingable, type HostedAudioService } from './hosted-audio.service.ts';

/**
 * What the audio check found in the part of the audio a video would sing: whether it holds a singing voice, for how
 * long, where that part begins in the audio and how long it lasts.
 */
export interface AudioVoiceCheck {
  vocalsFound: boolean;
  voicedSeconds: number;
  startSeconds: number;
  durationSeconds: number;
}

/**
 * The audio check before paying (the audio's counterpart of the photo check): the audio is measured as its video's
 * preparation and render will measure it. The window a video would sing is chosen as preparation chooses it (a sound
 * longer than a video: its 30 s with the most singing), it is separated as preparation separates it (once per
 * distinct bytes: stems are stored by their hash, so the video made from the same audio reuses them), and its vocal
 * stem's voice activity is read as the render reads it (@petsing/platform/audio). Nothing is stored besides the
 * stems, nothing is charged. Audio the create would refuse is refused the same way.
 */
export class AudioCheckService {
  constructor(
    private readonly stems: VocalStems,
    private readonly objects: ObjectStore,
    private readonly hostedAudio: HostedAudioService,
  ) {}

  /** An uploaded `audio` file, checked and made MP3 as POST /create-with-audio makes it. */
  async checkUpload(file: ReceivedFile, signal?: AbortSignal): Promise<AudioVoiceCheck> {
    const upload = await normalizeAudioUpload(file);
    return this.measure(upload.path, upload.durationSeconds, signal);
  }

  /** The caller's hosted audio (the `audio_url` of POST /tts or POST /social/extract-audio). */
  async checkHosted(userId: string, url: string, signal?: AbortSignal): Promise<AudioVoiceCheck> {
    const hosted = await this.hostedAudio.findOwnedByUrl(userId, url);
    if (!hosted) throw new AppError('unknown_audio_url', `"${url}" is not a hosted audio URL of this account.`);
    assertSingable(hosted, 'audio_url');
    return withScratchDirectory(SCRATCH_FOLDERS.audio, async (directory) => {
      const path = join(directory, 'hosted.mp3');
      await pipeline((await this.objects.get(hosted.object_key)).body, createWriteStream(path));
      return this.measure(path, hosted.duration_ms / 1000, signal);
    });
  }

  private async measure(path: string, sourceSeconds: number, signal?: AbortSignal): Promise<AudioVoiceCheck> {
    const stems = await withScratchDirectory(SCRATCH_FOLDERS.audio, async (directory) => {
      const start = await windowStart({ source: path, sourceSeconds, requested: undefined, stems: this.stems, objects: this.objects, directory, signal });
      const sung = start === undefined ? path : await cutWindow(path, start, join(directory, 'window.wav'), signal);
      return { start: start ?? 0, stems: await this.stems.stemsOf(sung, directory, signal) };
    }).catch((error: unknown) => {
      throw new AppError('service_unavailable', 'The audio could not be checked for a singing voice just now.', { cause: error });
    });
    const activity = await voiceOfStems(this.objects, stems.stems);
    const durationSeconds = Math.min(sourceSeconds - stems.start, MAX_AUDIO_SECONDS);
    const rounded = (seconds: number) => Math.round(seconds * 100) / 100;
    return {
      vocalsFound: activity.found,
      voicedSeconds: rounded(voicedSeconds(activity, 0, durationSeconds)),
      startSeconds: rounded(stems.start),
      durationSeconds: rounded(durationSeconds),
    };
  }
}
