import { MAX_AUDIO_SECONDS, MIN_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { AppError } from '../errors/app-error.ts';
import type { LocalUpload } from './uploads.ts';
import { MediaToolError, runMediaTool } from './ffmpeg.ts';

/**
 * Codec frames (up to ~26 ms) and encoder priming make a clip cut at exactly 30 s decode a few
 * milliseconds longer; this much is still "30 seconds".
 */
const DURATION_TOLERANCE_SECONDS = 0.05;

/** Decoding stops here: enough to tell that audio is too long without decoding hours of it. */
const DECODE_LIMIT_SECONDS = MAX_AUDIO_SECONDS + 1;

/**
 * Checks an uploaded audio file (already sniffed as MP3, WAV, MP4/AAC or WebM) and makes it MP3. Its
 * length is measured by decoding, since container headers can be missing (browser recordings) or lie.
 * MP3 is kept as sent; other formats are transcoded next to the upload, in the form's temporary
 * directory, so the form's cleanup removes the result too. A file without an audio stream fails the decode
 * (`-map 0:a:0` matches nothing).
 */
export async function normalizeAudioUpload(file: { field: string; path: string; contentType: string }): Promise<LocalUpload & { durationSeconds: number }> {
  const native = file.contentType === 'audio/mpeg';
  const mp3Path = native ? file.path : `${file.path}.mp3`;
  const output = native
    ? ['-f', 'null', '-']
    : ['-map_metadata', '-1', '-c:a', 'libmp3lame', '-q:a', '2', '-f', 'mp3', mp3Path];
  const progress = await runMediaTool(
    'ffmpeg',
    ['-nostdin', '-v', 'error', '-y', '-i', file.path, '-map', '0:a:0', '-vn', '-t', String(DECODE_LIMIT_SECONDS), '-progress', 'pipe:1', ...output],
  ).catch((error: unknown) => {
    if (error instanceof MediaToolError) {
      throw new AppError('unsupported_audio_format', `The "${file.field}" file could not be decoded as audio.`, { cause: error });
    }
    throw error;
  });

  const durationSeconds = decodedSeconds(progress);
  if (!(durationSeconds >= MIN_AUDIO_SECONDS && durationSeconds <= MAX_AUDIO_SECONDS + DURATION_TOLERANCE_SECONDS)) {
    const measured = durationSeconds >= DECODE_LIMIT_SECONDS ? `more than ${MAX_AUDIO_SECONDS}` : durationSeconds.toFixed(1);
    throw new AppError(
      'audio_duration_out_of_range',
      `The "${file.field}" audio lasts ${measured} seconds; it must last ${MIN_AUDIO_SECONDS} to ${MAX_AUDIO_SECONDS} seconds.`,
    );
  }
  return { path: mp3Path, contentType: 'audio/mpeg', extension: 'mp3', durationSeconds: Math.min(durationSeconds, MAX_AUDIO_SECONDS) };
}

/** The decoded length from ffmpeg's -progress report: its last out_time_us. */
function decodedSeconds(progress: string): number {
  const times = [...progress.matchAll(/^out_time_us=(\d+)$/gm)].map((match) => Number(match[1]));
  return (times.at(-1) ?? 0) / 1_000_000;
}
