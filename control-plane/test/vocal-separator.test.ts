import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inverseStft, stereoStft } from '../src/media/separator/stft.ts';
import { BUNDLED_SEPARATOR_MODEL, readSeparatorModel, SEPARATOR_MODEL_SHA256, SeparatorModelError, VocalSeparator } from '../src/media/separator/vocal-separator.ts';
import { correlation, frameEnvelope, makeSong, sdr, spanLoudnessDb, SONG_RATE } from '../../test/support/song-mix.ts';

/** A test song (a band throughout, a singer in two verses, instrumental breaks around them), 7 s. */
const VERSES = [[1.5, 3.5], [4.5, 6.5]] as const;

describe('the vocal separator (Spleeter 2-stem, ONNX)', () => {
  let separator: VocalSeparator;
  let folder: string;
  beforeAll(async () => {
    separator = await VocalSeparator.load();
    folder = await mkdtemp(join(tmpdir(), 'petsing-separator-'));
  });
  afterAll(async () => {
    await separator?.release();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  it('inverts its own STFT: the analysis and overlap-add give the signal back', () => {
    const samples = 3 * SONG_RATE + 123;
    const left = Float32Array.from({ length: samples }, (_, i) => Math.sin(i * 0.01) * 0.5 + Math.sin(i * 0.3) * 0.2);
    const right = Float32Array.from({ length: samples }, (_, i) => Math.cos(i * 0.002) * 0.4);
    // All bins kept (2049 would include Nyquist; 2048 keeps everything but it, which these signals do not reach).
    const spectrum = stereoStft(left, right, 2048);
    const back = inverseStft(spectrum.rightRe, spectrum.rightIm, spectrum.frames, 2048, samples);
    expect(sdr(right, back)).toBeGreaterThan(80);
  });

  it('keeps the voice of a made song and leaves its band-only passages near silent', async () => {
    const song = makeSong({ seconds: 7, verses: VERSES });
    const mix = song.left.map((l, i) => (l + song.right[i]!) / 2);
    const { vocals, accompaniment } = await separator.separate(song.left, song.right);
    expect(vocals.length).toBe(song.left.length);
    // The two stems add up to the mix (the accompaniment is the rest).
    expect(sdr(mix, vocals.map((v, i) => v + accompaniment[i]!))).toBeGreaterThan(60);

    const truth = frameEnvelope(song.voice, SONG_RATE);
    const separated = { r: correlation(frameEnvelope(vocals, SONG_RATE), truth), quieterDb: spanLoudnessDb(vocals, SONG_RATE, VERSES).differenceDb };
    const unseparated = { r: correlation(frameEnvelope(mix, SONG_RATE), truth), quieterDb: spanLoudnessDb(mix, SONG_RATE, VERSES).differenceDb };
    // The vocal stem follows the voice (measured: r 0.96) and is at least 30 dB quieter while only the band plays
    // (measured: 52 dB); the mix itself does neither (r 0.69, 3 dB).
    expect(separated.r).toBeGreaterThanOrEqual(0.85);
    expect(separated.quieterDb).toBeGreaterThanOrEqual(30);
    expect(unseparated.r).toBeLessThan(0.85);
    expect(unseparated.quieterDb).toBeLessThan(30);
    expect(sdr(song.voice, vocals)).toBeGreaterThan(sdr(song.voice, mix) + 5);
  }, 60_000);

  it('refuses a missing or altered model file, naming its path and the expected hash', async () => {
    const missing = join(folder, 'missing.onnx');
    const refusal = await readSeparatorModel(missing).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(SeparatorModelError);
    expect((refusal as Error).message).toContain(missing);
    expect((refusal as Error).message).toContain(SEPARATOR_MODEL_SHA256);

    const altered = join(folder, 'altered.onnx');
    await copyFile(BUNDLED_SEPARATOR_MODEL, altered);
    const bytes = await readFile(altered);
    bytes[bytes.length - 100] = bytes[bytes.length - 100]! ^ 0x01;
    await writeFile(altered, bytes);
    await expect(VocalSeparator.load({ path: altered })).rejects.toThrow(new RegExp(`${altered}.*has sha256 [0-9a-f]{64}.*expected sha256 ${SEPARATOR_MODEL_SHA256}`));
    // The committed file passes.
    expect((await readSeparatorModel()).length).toBeGreaterThan(30_000_000);
  });
});
