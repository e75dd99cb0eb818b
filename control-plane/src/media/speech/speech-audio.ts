import { MAX_AUDIO_SECONDS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { probeMedia, runMediaTool } from '../ffmpeg.ts';

/** An MP3's length reads back a few tens of milliseconds off (frame padding): stay this far inside 2–30 s. */
const MARGIN_SECONDS = 0.1;
/** Speech up to this much too long is sped up to fit instead of losing its last words; faster sounds rushed. */
const MAX_TEMPO = 1.25;

/**
 * Encodes synthesized speech as the MP3 a video accepts (POST /create-with-audio: 2 to 30 s): mono,
 * padded with silence to at least 2 s, sped up slightly or else cut to stay under 30 s.
 */
export async function encodeSpeechMp3(source: string, target: string, signal?: AbortSignal): Promise<{ durationSeconds: number }> {
  const probed = await probeMedia(source);
  if (!probed.hasAudio) throw new Error('the synthesized file has no audio stream');
  const longest = MAX_AUDIO_SECONDS - MARGIN_SECONDS;
  const filters: string[] = [];
  if (probed.durationSeconds > longest && probed.durationSeconds <= longest * MAX_TEMPO) {
    filters.push(`atempo=${(probed.durationSeconds / longest).toFixed(4)}`);
  }
  filters.push(`apad=whole_dur=${MIN_AUDIO_SECONDS + MARGIN_SECONDS}`);
  await runMediaTool(
    'ffmpeg',
    ['-v', 'error', '-nostdin', '-y', '-i', source, '-vn', '-af', filters.join(','), '-t', String(longest),
      '-ac', '1', '-c:a', 'libmp3lame', '-b:a', '96k', '-map_metadata', '-1', '-id3v2_version', '0', '-write_id3v1', '0', '-f', 'mp3', target],
    signal,
  );
  return { durationSeconds: (await probeMedia(target)).durationSeconds };
}
