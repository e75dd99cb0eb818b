import { voicedSeconds } from '@petsing/platform/audio';
import type { ObjectStore } from '@petsing/platform/storage';
import { withScratchDirectory } from '@petsing/platform/tools';
import { AppError } from '../errors/app-error.ts';
import type { ReceivedFile } from '../media/uploads.ts';
import { normalizeAudioUpload } from '../media/audio-upload.ts';
import { SCRATCH_FOLDERS } from '../media/scratch-folders.ts';
import { voiceOfStems } from '../media/separator/stem-voice.ts';
import type { VocalStems } from '../media/separator/vocal-stems.ts';

/** What the audio check found: whether the audio holds a singing voice, for how long, and how long the audio lasts. */
export interface AudioVoiceCheck {
  vocalsFound: boolean;
  voicedSeconds: number;
  durationSeconds: number;
}

/**
 * The audio check before paying (the audio's counterpart of the photo check): the audio is measured as its video's
 * preparation and render will measure it. It is separated as preparation separates it (once per distinct bytes: the
 * stems are stored by their hash, so the video made from the same file reuses them), and its vocal stem's voice
 * activity is read as the render reads it (@petsing/platform/audio). Nothing is stored besides the stems, nothing
 * is charged. Audio the create would refuse is refused the same way (400 unsupported_audio_format,
 * audio_duration_out_of_range).
 */
export class AudioCheckService {
  constructor(
    private readonly stems: VocalStems,
    private readonly objects: ObjectStore,
  ) {}

  async check(file: ReceivedFile, signal?: AbortSignal): Promise<AudioVoiceCheck> {
    const upload = await normalizeAudioUpload(file);
    const stems = await withScratchDirectory(SCRATCH_FOLDERS.audio, (directory) => this.stems.stemsOf(upload.path, directory, signal)).catch((error: unknown) => {
      throw new AppError('service_unavailable', 'The audio could not be checked for a singing voice just now.', { cause: error });
    });
    const activity = await voiceOfStems(this.objects, stems);
    const rounded = (seconds: number) => Math.round(seconds * 100) / 100;
    return {
      vocalsFound: activity.found,
      voicedSeconds: rounded(voicedSeconds(activity, 0, upload.durationSeconds)),
      durationSeconds: rounded(upload.durationSeconds),
    };
  }
}
