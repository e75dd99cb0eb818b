import { createReadStream, createWriteStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { withScratchDirectory } from '@petsing/platform/tools';
import { SCRATCH_FOLDERS } from './scratch-folders.ts';
import type { ObjectStore } from '@petsing/platform/storage';
import { MAX_AUDIO_SECONDS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { MediaToolError, probeMedia, runMediaTool } from './ffmpeg.ts';
import type { PreparedStems, VocalStems } from './separator/vocal-stems.ts';

/** The model's audio: mono, 16 kHz (the mel recipe's rate), loudness-normalized, at most 30 s. */
const PREPARED_SAMPLE_RATE = 16_000;

/** Audio a render cannot use. `message` is ours, for the video's owner; `detail` is what ffmpeg said, for the log only. */
export class AudioRejected extends Error {
  constructor(
    readonly code: 'audio_too_short' | 'audio_undecodable' | 'audio_no_stream',
    message: string,
    readonly detail?: string,
  ) {
    super(message);
    this.name = 'AudioRejected';
  }
}

/**
 * What a preparation does about the voice: `separate` (an uploaded, recorded or linked soundtrack: vocal isolation, once
 * per distinct audio), `clean-voice` (text-to-speech: the audio is its own vocal stem), `none` (template songs, whose
 * mouth follows their score).
 */
export type StemPolicy = 'separate' | 'clean-voice' | 'none';

export type PreparedAudioFiles = {
  durationSeconds: number;
  /** Present when the preparer has a separator and the policy is not `none`. */
  stems?: PreparedStems;
};

export class AudioPreparer {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  /**
   * ffmpeg is CPU-bound: more of them than cores only slows every one down (and starves the workflow
   * worker sharing the machine), so preparations beyond `concurrency` wait their turn.
   */
  constructor(
    private readonly objects: ObjectStore,
    private readonly concurrency = availableParallelism(),
    /** The vocal separator; without one, preparations make no stems. */
    private readonly vocalStems?: VocalStems,
  ) {}

  /** Reads the source from the object store, writes the prepared WAV to `targetKey`; returns its length and its stems. */
  async prepare(sourceKey: string, targetKey: string, signal?: AbortSignal, stems: StemPolicy = 'separate'): Promise<PreparedAudioFiles> {
    // A finishing preparation hands its slot straight to the next waiter, so the limit is never exceeded.
    if (this.running < this.concurrency) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await this.prepareNow(sourceKey, targetKey, signal, stems);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async prepareNow(sourceKey: string, targetKey: string, signal: AbortSignal | undefined, stems: StemPolicy): Promise<PreparedAudioFiles> {
    return withScratchDirectory(SCRATCH_FOLDERS.audio, async (directory) => {
      const source = join(directory, 'source');
      const prepared = join(directory, 'prepared.wav');
      const object = await this.objects.get(sourceKey);
      await pipeline(object.body, createWriteStream(source));

      const probed = await probeMedia(source).catch((error: unknown) => {
        throw new AudioRejected('audio_undecodable', 'The audio could not be read: it is damaged, or not an audio format ffmpeg reads.', (error as Error).message);
      });
      if (!probed.hasAudio) throw new AudioRejected('audio_no_stream', 'The file has no audio stream.');

      await runMediaTool(
        'ffmpeg',
        ['-v', 'error', '-y', '-i', source, '-vn', '-t', String(MAX_AUDIO_SECONDS), '-af', 'loudnorm=I=-16:TP=-1.5:LRA=11',
          '-ac', '1', '-ar', String(PREPARED_SAMPLE_RATE), '-c:a', 'pcm_s16le', prepared],
        signal,
      ).catch((error: unknown) => {
        if (error instanceof MediaToolError) throw new AudioRejected('audio_undecodable', 'The audio could not be decoded: it looks damaged or incomplete.', error.message);
        throw error;
      });

      const { durationSeconds } = await probeMedia(prepared);
      if (!(durationSeconds >= MIN_AUDIO_SECONDS)) {
        throw new AudioRejected('audio_too_short', `The audio lasts ${durationSeconds.toFixed(2)} s; at least ${MIN_AUDIO_SECONDS} s are needed.`);
      }
      await this.objects.put(targetKey, createReadStream(prepared), { contentType: 'audio/wav' });
      if (!this.vocalStems || stems === 'none') return { durationSeconds };
      if (stems === 'clean-voice') return { durationSeconds, stems: { vocalKey: targetKey, accompanimentKey: null, origin: 'clean' } };
      return { durationSeconds, stems: await this.vocalStems.stemsOf(source, directory, signal) };
    });
  }
}
