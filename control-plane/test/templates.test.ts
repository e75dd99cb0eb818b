import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PitchName, TemplateDefinition } from '../src/templates/template-catalog.ts';
import { templateCatalog } from '../src/templates/template-catalog.ts';
import type { TimedNote } from '../src/templates/melody-synth.ts';
import { encodeWav, melodyTimeline, mouthKeyframes, noteFrequency, sungNotes, synthesizeSong, synthesizeVoice, templateDurationSeconds, type Song } from '../src/templates/melody-synth.ts';
import { parseSyllable, syllablesOf, VOWEL_POSE } from '../src/templates/lyrics.ts';
import { MouthTrack } from '@petsing/workflows';
import type { TemplateAssets } from '../src/templates/template-assets.ts';
import { buildTemplateAssets, encodeMp3 } from '../src/templates/template-assets.ts';
import { escapeSvgText, previewSvg, renderPreviewImage } from '../src/templates/template-preview.ts';

const run = promisify(execFile);
const sampleRate = 44100;

const sha256 = (data: Buffer) => createHash('sha256').update(data).digest('hex');

function samplesBetween(pcm: Float32Array, startSeconds: number, endSeconds: number): Float32Array {
  return pcm.subarray(Math.round(startSeconds * sampleRate), Math.round(endSeconds * sampleRate));
}

function rms(samples: Float32Array): number {
  let sum = 0;
  for (const sample of samples) sum += sample * sample;
  return Math.sqrt(sum / samples.length);
}

/** Frequency of the strongest Hann-windowed DFT component within six semitones of `expected`. */
function dominantFrequencyNear(samples: Float32Array, expected: number): number {
  const windowed = samples.map((sample, n) => sample * (0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (samples.length - 1))));
  let bestFrequency = 0;
  let bestPower = -1;
  for (let frequency = expected * 2 ** (-6 / 12); frequency <= expected * 2 ** (6 / 12); frequency *= 1.0025) {
    const step = (2 * Math.PI * frequency) / sampleRate;
    let real = 0;
    let imaginary = 0;
    windowed.forEach((sample, n) => {
      real += sample * Math.cos(step * n);
      imaginary -= sample * Math.sin(step * n);
    });
    const power = real * real + imaginary * imaginary;
    if (power > bestPower) {
      bestPower = power;
      bestFrequency = frequency;
    }
  }
  return bestFrequency;
}

/** Sung notes long enough to measure away from their attack and release. */
function heldNotes(def: TemplateDefinition): (TimedNote & { pitch: PitchName })[] {
  return melodyTimeline(def).filter((note): note is TimedNote & { pitch: PitchName } => note.pitch !== 'rest' && note.durationSeconds >= 0.4);
}

const synthesized = new Map<string, { song: Song; mono: Float32Array }>();
function synthesizedOf(def: TemplateDefinition): { song: Song; mono: Float32Array } {
  let found = synthesized.get(def.id);
  if (!found) {
    const song = synthesizeSong(def, { sampleRate });
    const [left, right] = song.mix;
    found = { song, mono: left.map((sample, n) => (sample + right[n]!) / 2) };
    synthesized.set(def.id, found);
  }
  return found;
}
/** The song folded to mono (the mean of its channels). */
const pcmOf = (def: TemplateDefinition) => synthesizedOf(def).mono;

function correlation(a: Float32Array, b: Float32Array): number {
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let n = 0; n < a.length; n++) {
    ab += a[n]! * b[n]!;
    aa += a[n]! * a[n]!;
    bb += b[n]! * b[n]!;
  }
  return ab / Math.sqrt(aa * bb);
}

describe('template catalog', () => {
  it('ships at least five templates with ids "1".."N" in order and unique names', () => {
    expect(templateCatalog.length).toBeGreaterThanOrEqual(5);
    expect(templateCatalog.map((def) => def.id)).toEqual(templateCatalog.map((_, index) => String(index + 1)));
    expect(new Set(templateCatalog.map((def) => def.name)).size).toBe(templateCatalog.length);
    for (const def of templateCatalog) {
      expect(def.name.trim()).not.toBe('');
      expect(def.description.trim()).not.toBe('');
    }
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s: chords cover the melody and phrases end in rests', (_, def) => {
    const beats = (spans: readonly (readonly [string, number])[]) => spans.reduce((sum, [, length]) => sum + length, 0);
    expect(beats(def.chords)).toBe(beats(def.notes));
    expect(def.notes.some(([pitch]) => pitch === 'rest')).toBe(true);
    expect(def.notes.every(([, length]) => length > 0)).toBe(true);
  });
});

describe('melody synthesis', () => {
  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s lasts 10 to 20 seconds', (_, def) => {
    const seconds = pcmOf(def).length / sampleRate;
    expect(seconds).toBeGreaterThanOrEqual(10);
    expect(seconds).toBeLessThanOrEqual(20);
    expect(seconds).toBeCloseTo(templateDurationSeconds(def), 3);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s is deterministic and stays within full scale', (_, def) => {
    const first = synthesizedOf(def).song;
    const second = synthesizeSong(def, { sampleRate });
    expect(sha256(encodeWav(second.mix, sampleRate))).toBe(sha256(encodeWav(first.mix, sampleRate)));
    expect(sha256(encodeWav(second.voice, sampleRate))).toBe(sha256(encodeWav(first.voice, sampleRate)));
    for (const samples of [...first.mix, first.voice]) expect(samples.every((sample) => Number.isFinite(sample) && Math.abs(sample) <= 1)).toBe(true);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s is mixed in stereo: the voice in the middle, the chords spread across', (_, def) => {
    const { song, mono } = synthesizedOf(def);
    const [left, right] = song.mix;
    const side = left.map((sample, n) => (sample - right[n]!) / 2);
    // The chords give the two channels a difference of their own (a mono mix has none).
    expect(rms(side)).toBeGreaterThan(0.02 * rms(mono));
    // The voice stem is the voice in the mix, at its level there: it is most of the mix, and none of the rest.
    expect(correlation(mono, song.voice)).toBeGreaterThan(0.7);
    const band = mono.map((sample, n) => sample - song.voice[n]!);
    expect(Math.abs(correlation(band, song.voice))).toBeLessThan(0.1);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s is near-silent during rests', (_, def) => {
    const pcm = pcmOf(def);
    const timeline = melodyTimeline(def);
    const rests = timeline.filter((note) => note.pitch === 'rest' && note.durationSeconds >= 0.2);
    const held = heldNotes(def);
    expect(rests.length).toBeGreaterThan(0);
    expect(held.length).toBeGreaterThan(0);

    const heldLevel = Math.min(...held.map((note) => {
      const middle = note.startSeconds + note.durationSeconds / 2;
      return rms(samplesBetween(pcm, middle - 0.1, middle + 0.1));
    }));
    expect(heldLevel).toBeGreaterThan(0.05);
    for (const rest of rests) {
      // Skip the first 50 ms, where the accompaniment is still fading out.
      const level = rms(samplesBetween(pcm, rest.startSeconds + 0.05, rest.startSeconds + rest.durationSeconds - 0.01));
      expect(level).toBeLessThan(heldLevel * 0.02);
    }
    const lead = rms(samplesBetween(pcm, 0, timeline[0]?.startSeconds ?? 0));
    expect(lead).toBeLessThan(heldLevel * 0.02);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s sings every held note at its pitch', (_, def) => {
    const pcm = pcmOf(def);
    const held = heldNotes(def);
    expect(held.length).toBeGreaterThan(0);
    for (const note of held) {
      const middle = note.startSeconds + note.durationSeconds / 2;
      const expected = noteFrequency(note.pitch);
      const measured = dominantFrequencyNear(samplesBetween(pcm, middle - 0.08, middle + 0.08), expected);
      expect(Math.abs(measured / expected - 1), `${note.pitch} at ${note.startSeconds.toFixed(2)} s measured ${measured.toFixed(1)} Hz`).toBeLessThan(0.03);
    }
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s has one syllable of lyrics per sung note', (_, def) => {
    expect(sungNotes(def).length).toBe(def.notes.filter(([pitch]) => pitch !== 'rest').length);
  });

  it('sings each vowel with its own colour: "ee" bright, "oo" dark, "ah" open', () => {
    // Three long syllables on one pitch, so only the vowel differs.
    const def: TemplateDefinition = { ...templateCatalog[0]!, notes: [['A4', 2], ['A4', 2], ['A4', 2], ['rest', 2]], chords: [['C', 8]], lyrics: 'ee ah oo' };
    const voice = synthesizeVoice(def, sampleRate);
    const f0 = noteFrequency('A4');
    const [ee, ah, oo] = sungNotes(def).map(({ note }) => {
      const middle = note.startSeconds + note.durationSeconds / 2;
      const window = samplesBetween(voice, middle - 0.1, middle + 0.1);
      // Power at each harmonic of the note, summed within a band.
      const band = (low: number, high: number) => {
        let energy = 0;
        for (let k = Math.ceil(low / f0); k * f0 < high; k++) {
          const step = (2 * Math.PI * k * f0) / sampleRate;
          let real = 0;
          let imaginary = 0;
          window.forEach((sample, n) => {
            const hann = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / (window.length - 1));
            real += sample * hann * Math.cos(step * n);
            imaginary -= sample * hann * Math.sin(step * n);
          });
          energy += real * real + imaginary * imaginary;
        }
        return energy;
      };
      return { bright: band(1800, 3500) / band(150, 1000), firstFormant: band(650, 1000) / band(150, 500) };
    });
    expect(ee!.bright).toBeGreaterThan(3 * oo!.bright);
    expect(ah!.firstFormant).toBeGreaterThan(3 * ee!.firstFormant);
    expect(ah!.firstFormant).toBeGreaterThan(3 * oo!.firstFormant);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s keys the mouth to the score: shut in rests, open on each vowel', (_, def) => {
    const keyframes = mouthKeyframes(def);
    expect(MouthTrack.safeParse({ keyframes }).success).toBe(true);
    const openAt = (seconds: number) => {
      const after = keyframes.findIndex(([t]) => t > seconds);
      const [t0, open0] = keyframes[Math.max(0, after - 1)]!;
      const [t1, open1] = keyframes[after === -1 ? keyframes.length - 1 : after]!;
      return t1 > t0 ? open0 + ((open1 - open0) * (seconds - t0)) / (t1 - t0) : open0;
    };
    for (const rest of melodyTimeline(def).filter((note) => note.pitch === 'rest')) expect(openAt(rest.startSeconds + rest.durationSeconds / 2)).toBeLessThan(0.05);
    expect(openAt(0.1)).toBe(0);
    expect(openAt(templateDurationSeconds(def) - 0.05)).toBeLessThan(0.05);
    for (const { note, syllable } of sungNotes(def)) {
      expect(openAt(note.startSeconds + note.durationSeconds / 2), syllable.text).toBeGreaterThanOrEqual(0.6 * VOWEL_POSE[syllable.vowel].open);
      if (syllable.onset === 'lips') expect(openAt(note.startSeconds), syllable.text).toBeLessThan(0.02);
    }
  });

  it('reads syllables loosely but right for singing', () => {
    const read = (text: string) => {
      const { onset, vowel } = parseSyllable(text);
      return `${onset}:${vowel}`;
    };
    expect(['Twin', 'kle', 'star', 'you', 'moi', 'E', 'I', 'bells', 'row', 'what', 'lu', 'ne', 'stream', 'sleigh'].map(read)).toEqual([
      'tongue:i', 'tongue:schwa', 'tongue:a', 'tongue:u', 'lips:a', 'none:i', 'none:a', 'lips:e', 'liquid:o', 'round:a', 'liquid:u', 'tongue:schwa', 'tongue:i', 'tongue:e',
    ]);
    expect(syllablesOf('Twin-kle twin-kle, lit-tle star!').map((syllable) => syllable.text)).toEqual(['Twin', 'kle', 'twin', 'kle,', 'lit', 'tle', 'star!']);
  });

  it('encodes 16-bit stereo PCM WAV with the channels interleaved', () => {
    const wav = encodeWav([new Float32Array([0.5, 0]), new Float32Array([-0.5, 1])], 48000);
    expect([wav.readUInt16LE(22), wav.readUInt32LE(28), wav.readUInt16LE(32), wav.readUInt32LE(40)]).toEqual([2, 48000 * 4, 4, 8]);
    expect(Array.from({ length: 4 }, (_, index) => wav.readInt16LE(44 + index * 2))).toEqual([16384, -16383, 0, 32767]);
  });

  it('encodes 16-bit mono PCM WAV, rounding and clipping to full scale', () => {
    const wav = encodeWav(new Float32Array([0, 0.25, -0.25, 1, -1, 1.5, -1.5]), 22050);
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(wav.readUInt16LE(20)).toBe(1);
    expect(wav.readUInt16LE(22)).toBe(1);
    expect(wav.readUInt32LE(24)).toBe(22050);
    expect(wav.readUInt16LE(34)).toBe(16);
    expect(wav.toString('ascii', 36, 40)).toBe('data');
    expect(wav.readUInt32LE(40)).toBe(14);
    const samples = Array.from({ length: 7 }, (_, index) => wav.readInt16LE(44 + index * 2));
    expect(samples).toEqual([0, 8192, -8192, 32767, -32767, 32767, -32767]);
  });
});

describe('template assets', () => {
  let scratch: string;
  const assets = new Map<string, TemplateAssets>();

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), 'petsing-templates-'));
    const built = await Promise.all(templateCatalog.map((def) => buildTemplateAssets(def)));
    built.forEach((asset, index) => assets.set(templateCatalog[index]?.id ?? '', asset));
  });

  afterAll(async () => {
    await rm(scratch, { recursive: true, force: true });
  });

  function assetsOf(def: TemplateDefinition): TemplateAssets {
    const asset = assets.get(def.id);
    if (!asset) throw new Error(`No assets were built for template ${def.id}`);
    return asset;
  }

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s has an MP3 whose probed duration matches', async (_, def) => {
    const asset = assetsOf(def);
    expect(asset.audioContentType).toBe('audio/mpeg');
    expect(asset.durationSeconds).toBeCloseTo(pcmOf(def).length / sampleRate, 6);

    const file = join(scratch, `${def.id}.mp3`);
    await writeFile(file, asset.audio);
    const { stdout } = await run('ffprobe', ['-v', 'error', '-show_entries', 'stream=codec_type,codec_name,channels:format=format_name,duration', '-of', 'json', file]);
    const probe = JSON.parse(stdout) as { streams: { codec_type: string; codec_name: string; channels: number }[]; format: { format_name: string; duration: string } };
    expect(probe.format.format_name).toBe('mp3');
    expect(probe.streams).toEqual([{ codec_type: 'audio', codec_name: 'mp3', channels: 2 }]);
    expect(Math.abs(Number(probe.format.duration) - asset.durationSeconds)).toBeLessThanOrEqual(0.3);
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s builds byte-identical MP3 audio every time', async (_, def) => {
    const again = await buildTemplateAssets(def);
    expect(sha256(again.audio)).toBe(sha256(assetsOf(def).audio));
  });

  it.each(templateCatalog.map((def) => [def.name, def] as const))('%s has a 512x512 preview image', async (_, def) => {
    const asset = assetsOf(def);
    expect(asset.previewImageContentType).toBe('image/png');
    const metadata = await sharp(asset.previewImage).metadata();
    expect(metadata.format).toBe('png');
    expect([metadata.width, metadata.height]).toEqual([512, 512]);
  });

  it('gives each template its own preview image', () => {
    const hashes = templateCatalog.map((def) => sha256(assetsOf(def).previewImage));
    expect(new Set(hashes).size).toBe(templateCatalog.length);
  });

  it('escapes names that contain SVG markup characters', async () => {
    const name = `Cats & Dogs <3 "Ode" d'Arc`;
    expect(escapeSvgText(name)).toBe('Cats &amp; Dogs &lt;3 &quot;Ode&quot; d&apos;Arc');
    const base = templateCatalog[0];
    if (!base) throw new Error('The catalog is empty');
    const def: TemplateDefinition = { ...base, name };
    const svg = previewSvg(def);
    expect(svg).not.toContain('<3');
    const metadata = await sharp(await renderPreviewImage(def)).metadata();
    expect([metadata.width, metadata.height]).toEqual([512, 512]);
  });

  it('rejects with ffmpeg\'s stderr when encoding fails', async () => {
    const failure = encodeMp3(Buffer.from('this is not a WAV file'));
    await expect(failure).rejects.toThrow(/^ffmpeg MP3 encoding failed: ffmpeg exited with code [1-9]\d*: (?!\(no stderr output\))\S/);
  });

  it('rejects clearly when ffmpeg cannot be started', async () => {
    const missing = join(scratch, 'no-such-ffmpeg');
    await expect(encodeMp3(encodeWav(new Float32Array(100), sampleRate), { ffmpegPath: missing })).rejects.toThrow(`Could not run ffmpeg (${missing})`);
  });
});
