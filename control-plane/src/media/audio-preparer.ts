import { createReadStream, createWriteStream } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { withScratchDirectory } from '@petsing/platform/tools';
import { SCRATCH_FOLDERS } from './scratch-folders.ts';
import type { ObjectStore } from '@petsing/platform/storage';
import { MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { MediaToolError, probeMedia } from './ffmpeg.ts';
import { writeAudioCopies } from './loudness.ts';
import { cutWindow, windowStart } from './audio-window.ts';
import type { PreparedStems, VocalStems } from './separator/vocal-stems.ts';

/**
 * Where a preparation stores its copies (at least one): `analysisKey`, the audio the render node listens to (mono
 * 16 kHz WAV); `deliveryKey`, the video's soundtrack (stereo 48 kHz AAC in M4A). Both at a measured loudness, at most 30 s.
 */
export type AudioTargets = { analysisKey: string; deliveryKey?: string } | { analysisKey?: string; deliveryKey: string };

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
  /** Where in the source the copies and stems begin; absent: at its start (a source no longer than a video). */
  startSeconds?: number;
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

  /**
   * Reads the source from the object store, writes the prepared copies to `targets`; returns their length, the stems,
   * and where in the source they begin (`startSeconds`, the caller's, or chosen for a source longer than a video).
   */
  async prepare(sourceKey: string, targets: AudioTargets, signal?: AbortSignal, stems: StemPolicy = 'separate', startSeconds?: number): Promise<PreparedAudioFiles> {
    // A finishing preparation hands its slot straight to the next waiter, so the limit is never exceeded.
    if (this.running < this.concurrency) this.running++;
    else await new Promise<void>((resolve) => this.waiting.push(resolve));
    try {
      return await this.prepareNow(sourceKey, targets, signal, stems, startSeconds);
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }

  private async prepareNow(sourceKey: string, targets: AudioTargets, signal: AbortSignal | undefined, stems: StemPolicy, requestedStart: number | undefined): Promise<PreparedAudioFiles> {
    return withScratchDirectory(SCRATCH_FOLDERS.audio, async (directory) => {
      const source = join(directory, 'source');
      const prepared = join(directory, 'prepared.wav');
      const delivery = join(directory, 'delivery.m4a');
      const object = await this.objects.get(sourceKey);
      await pipeline(object.body, createWriteStream(source));

      const probed = await probeMedia(source).catch((error: unknown) => {
        throw new AudioRejected('audio_undecodable', 'The audio could not be read: it is damaged, or not an audio format ffmpeg reads.', (error as Error).message);
      });
      if (!probed.hasAudio) throw new AudioRejected('audio_no_stream', 'The file has no audio stream.');
      // The window of a source longer than a video (or from the caller's start): copies and stems are all cut from it.
      const separator = stems === 'separate' ? this.vocalStems : undefined;
      const start = await windowStart({ source, sourceSeconds: probed.durationSeconds, requested: requestedStart, stems: separator, objects: this.objects, directory, signal });
      const sung = start === undefined ? source : await cutWindow(source, start, join(directory, 'window.wav'), signal).catch((error: unknown) => {
        if (error instanceof MediaToolError) throw new AudioRejected('audio_undecodable', 'The audio could not be decoded: it looks damaged or incomplete.', error.message);
        throw error;
      });
      const window = start === undefined ? {} : { startSeconds: start };

      await writeAudioCopies(
        sung,
        { ...(targets.analysisKey ? { analysis: prepared } : {}), ...(targets.deliveryKey ? { delivery } : {}) },
        signal,
      ).catch((error: unknown) => {
        if (error instanceof MediaToolError) throw new AudioRejected('audio_undecodable', 'The audio could not be decoded: it looks damaged or incomplete.', error.message);
        throw error;
      });

      const { durationSeconds } = await probeMedia(targets.analysisKey ? prepared : delivery);
      if (!(durationSeconds >= MIN_AUDIO_SECONDS)) {
        throw new AudioRejected('audio_too_short', `The audio lasts ${durationSeconds.toFixed(2)} s; at least ${MIN_AUDIO_SECONDS} s are needed.`);
      }
      if (targets.analysisKey) await this.objects.put(targets.analysisKey, createReadStream(prepared), { contentType: 'audio/wav' });
      if (targets.deliveryKey) await this.objects.put(targets.deliveryKey, createReadStream(delivery), { contentType: 'audio/mp4' });
      if (!this.vocalStems || stems === 'none') return { durationSeconds, ...window };
      // Text-to-speech is its own vocal stem: the analysis copy (a preparation that makes none has no stem to give).
      if (stems === 'clean-voice') return targets.analysisKey ? { durationSeconds, ...window, stems: { vocalKey: targets.analysisKey, accompanimentKey: null, origin: 'clean' } } : { durationSeconds, ...window };
      return { durationSeconds, ...window, stems: await this.vocalStems.stemsOf(sung, directory, signal) };
    });
  }
}
