import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runProcess } from '@petsing/platform/tools';
import type { ObjectStore } from '@petsing/platform/storage';
import { MAX_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { runMediaTool } from '../ffmpeg.ts';
import { SEPARATOR_SAMPLE_RATE, SEPARATOR_VERSION, VocalSeparator, type SeparatorOptions } from './vocal-separator.ts';

/** The stems' analysis copies: mono 16 kHz, as the prepared audio (the mel recipe's rate). */
export const STEM_SAMPLE_RATE = 16_000;
/** Decoded 44.1 kHz stereo float of `seconds`, with room to spare. */
const decodedBytes = (seconds: number) => (seconds + 2) * SEPARATOR_SAMPLE_RATE * 2 * 4;

/**
 * A soundtrack's two stems, as mono 16 kHz 16-bit WAV objects at the source's level (not loudness-normalised, so the
 * two compare: their sum is the source's mono downmix, resampled):
 * - `vocalKey`: the voice alone;
 * - `accompaniment`: everything else; null when the source is a voice alone.
 * `origin`: `separated` (this preparation ran the separator), `reused` (stems of the same bytes were stored),
 * `clean` (text-to-speech: the vocal stem is the prepared audio itself, and there is no accompaniment).
 */
export interface PreparedStems {
  vocalKey: string;
  accompanimentKey: string | null;
  origin: 'separated' | 'reused' | 'clean';
}

/** The folder of every stored stem. */
const STEMS_FOLDER = 'stems';
/**
 * How long stems are kept after they were made: they come from a person's audio, and a deleted video must not leave
 * them for ever. The orphan sweep removes older ones (removeExpiredStems); a later video of the same audio is separated again.
 */
const STEM_RETENTION_SECONDS = 7 * 24 * 3600;
/** Stored stems are reused only while they have this long left, so no render looks for stems the sweep removed. */
const REUSE_MARGIN_SECONDS = 24 * 3600;

/** Where the stems of a source with this sha256 are kept: content-addressed, so any video of the same bytes reuses them. */
export function stemKeys(sourceSha256: string): { folder: string; vocals: string; accompaniment: string } {
  const folder = `${STEMS_FOLDER}/${SEPARATOR_VERSION}/${sourceSha256}`;
  return { folder, vocals: `${folder}/vocals.wav`, accompaniment: `${folder}/accompaniment.wav` };
}

/**
 * Vocal isolation for audio preparation: the separator (checked when a control worker starts) is loaded on first use;
 * each distinct source (by the sha256 of its bytes) is separated once, its stems stored under `stemKeys` and reused.
 */
export class VocalStems {
  private loading: Promise<VocalSeparator> | undefined;
  /** Separations this process ran (what a test reads to see that a second preparation reused the stems). */
  separations = 0;

  constructor(
    private readonly objects: ObjectStore,
    private readonly options: SeparatorOptions = {},
  ) {}

  /**
   * The stems of the source file `source` (its first `maxSeconds`: a video's length, or a whole long soundtrack whose
   * singing window is sought), separated now or found in the store.
   */
  async stemsOf(source: string, directory: string, signal?: AbortSignal, maxSeconds = MAX_AUDIO_SECONDS): Promise<PreparedStems> {
    const keys = stemKeys(await sha256Of(source));
    if (await this.reusable(keys)) return { vocalKey: keys.vocals, accompanimentKey: keys.accompaniment, origin: 'reused' };
    const { left, right } = await decodeStereo(source, maxSeconds, signal);
    const separator = await this.separator();
    const { vocals, accompaniment } = await separator.separate(left, right);
    this.separations++;
    const vocalPath = join(directory, 'vocals.f32');
    const accompanimentPath = join(directory, 'accompaniment.f32');
    await writeFile(vocalPath, new Uint8Array(vocals.buffer, vocals.byteOffset, vocals.byteLength));
    await writeFile(accompanimentPath, new Uint8Array(accompaniment.buffer, accompaniment.byteOffset, accompaniment.byteLength));
    const raw = ['-f', 'f32le', '-ar', String(SEPARATOR_SAMPLE_RATE), '-ac', '1'];
    const wav = ['-ar', String(STEM_SAMPLE_RATE), '-c:a', 'pcm_s16le'];
    await runMediaTool('ffmpeg', [
      '-v', 'error', '-y', ...raw, '-i', vocalPath, ...raw, '-i', accompanimentPath,
      '-map', '0:a', ...wav, join(directory, 'vocals.wav'), '-map', '1:a', ...wav, join(directory, 'accompaniment.wav'),
    ], signal);
    // The accompaniment first: a crash between the two leaves no vocal stem, and the next preparation separates again.
    await this.objects.put(keys.accompaniment, createReadStream(join(directory, 'accompaniment.wav')), { contentType: 'audio/wav' });
    await this.objects.put(keys.vocals, createReadStream(join(directory, 'vocals.wav')), { contentType: 'audio/wav' });
    return { vocalKey: keys.vocals, accompanimentKey: keys.accompaniment, origin: 'separated' };
  }

  /** Both stems are stored, and young enough to outlive the render that asks for them. */
  private async reusable(keys: ReturnType<typeof stemKeys>, now = Date.now()): Promise<boolean> {
    const made = new Map<string, Date>();
    for await (const object of this.objects.list(keys.folder)) made.set(object.key, object.lastModified);
    const reusableSince = now - (STEM_RETENTION_SECONDS - REUSE_MARGIN_SECONDS) * 1000;
    return [keys.vocals, keys.accompaniment].every((key) => (made.get(key)?.getTime() ?? 0) > reusableSince);
  }

  async release(): Promise<void> {
    const loading = this.loading;
    this.loading = undefined;
    if (loading) await (await loading.catch(() => undefined))?.release();
  }

  private separator(): Promise<VocalSeparator> {
    this.loading ??= VocalSeparator.load(this.options).catch((error: unknown) => {
      this.loading = undefined;
      throw error;
    });
    return this.loading;
  }
}

/** Removes the stems made more than STEM_RETENTION_SECONDS before `now`; answers how many objects it removed. */
export async function removeExpiredStems(objects: ObjectStore, now = new Date()): Promise<number> {
  const cutoff = now.getTime() - STEM_RETENTION_SECONDS * 1000;
  let removed = 0;
  for await (const object of objects.list(`${STEMS_FOLDER}/`)) {
    if (object.lastModified.getTime() >= cutoff) continue;
    await objects.delete(object.key);
    removed++;
  }
  return removed;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** The first `maxSeconds` of the source as 44.1 kHz stereo float (a mono source in both channels). */
async function decodeStereo(source: string, maxSeconds: number, signal?: AbortSignal): Promise<{ left: Float32Array; right: Float32Array }> {
  const result = await runProcess('ffmpeg', [
    '-v', 'error', '-i', source, '-vn', '-t', String(maxSeconds), '-ac', '2', '-ar', String(SEPARATOR_SAMPLE_RATE), '-f', 'f32le', 'pipe:1',
  ], { ...(signal ? { signal } : {}), maxStdoutBytes: decodedBytes(maxSeconds) });
  if (result.code !== 0) throw new Error(`ffmpeg could not decode the audio for separation: ${result.stderr.trim().split('\n').slice(-2).join(' | ')}`);
  const interleaved = new Float32Array(result.stdout.buffer.slice(result.stdout.byteOffset, result.stdout.byteOffset + result.stdout.length - (result.stdout.length % 8)));
  const frames = interleaved.length / 2;
  const left = new Float32Array(frames);
  const right = new Float32Array(frames);
  for (let i = 0; i < frames; i++) {
    left[i] = interleaved[2 * i]!;
    right[i] = interleaved[2 * i + 1]!;
  }
  return { left, right };
}
