import { bestSingingWindow } from '@petsing/platform/audio';
import type { ObjectStore } from '@petsing/platform/storage';
import { MAX_AUDIO_SECONDS, MAX_SOURCE_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { runMediaTool } from './ffmpeg.ts';
import { voiceOfStems } from './separator/stem-voice.ts';
import type { VocalStems } from './separator/vocal-stems.ts';

/** Codec frames make a 30 s clip decode a few milliseconds longer; up to this much over is still a video's length. */
const LENGTH_TOLERANCE_SECONDS = 0.05;

/**
 * Where in the source a video's audio begins (README, "The best 30 seconds"), or undefined when it is the source as it
 * is (no start asked for, and no longer than a video). A caller's start is taken as given (the API checked it against
 * the audio's length). A longer source is separated whole (up to MAX_SOURCE_AUDIO_SECONDS, its stems stored by its
 * hash as any stems) and the window with the most singing is chosen from its vocal stem, at a phrase start; without a
 * separator (or for text-to-speech and templates, never that long) it begins at the start.
 */
export async function windowStart(options: {
  source: string;
  sourceSeconds: number;
  requested: number | undefined;
  stems: VocalStems | undefined;
  objects: ObjectStore;
  directory: string;
  signal?: AbortSignal | undefined;
}): Promise<number | undefined> {
  const { source, sourceSeconds, requested, stems } = options;
  if (requested !== undefined) return requested;
  if (!(sourceSeconds > MAX_AUDIO_SECONDS + LENGTH_TOLERANCE_SECONDS)) return undefined;
  if (!stems) return 0;
  const whole = await stems.stemsOf(source, options.directory, options.signal, MAX_SOURCE_AUDIO_SECONDS);
  const activity = await voiceOfStems(options.objects, whole);
  return bestSingingWindow(activity, Math.min(sourceSeconds, MAX_SOURCE_AUDIO_SECONDS), MAX_AUDIO_SECONDS).startSeconds;
}

/**
 * The window of `source` from `startSeconds`, at most MAX_AUDIO_SECONDS, as a lossless WAV at the source's rate and
 * channels (its first audio stream): what the copies and the stems are then made from, so all of them cover the same time.
 */
export async function cutWindow(source: string, startSeconds: number, target: string, signal?: AbortSignal): Promise<string> {
  await runMediaTool('ffmpeg', [
    '-nostdin', '-v', 'error', '-y', '-ss', startSeconds.toFixed(3), '-i', source, '-t', String(MAX_AUDIO_SECONDS),
    '-map', '0:a:0', '-vn', '-map_metadata', '-1', '-c:a', 'pcm_f32le', target,
  ], signal);
  return target;
}
