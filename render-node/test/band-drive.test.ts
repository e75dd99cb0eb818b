import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { makeSong, SONG_RATE } from '../../test/support/song-mix.ts';
import { decodeAudio, decodeStem } from '../src/audio-decoder.ts';
import { trackBand } from '../src/beat-tracker.ts';
import { idlePoses, type Rhythm } from '../src/idle-life.ts';
import { vocalActivity } from '@petsing/platform/audio';
import type { VoiceTrack } from '../src/voice-driver.ts';
import { run, tempDir } from './helpers.ts';

/** The band's beats, the voice's activity and the life they drive, on made songs whose parts are known (song-mix.ts). */

const FPS = 25;
/** A beat found within this of the true one is on it (a frame and a bit at 25 fps). */
const ON_BEAT_SECONDS = 0.035;

const nearest = (times: number[], t: number) => Math.min(...times.map((time) => Math.abs(time - t)));

describe('beats and downbeats from the accompaniment', () => {
  for (const bpm of [90, 112, 128]) {
    it(`finds the tempo, the beats and the bar of a band at ${bpm} beats a minute`, () => {
      const seconds = 20;
      const band = makeSong({ seconds, verses: [], tempoBpm: bpm }).band;
      const { beats, playing } = trackBand(band, SONG_RATE);
      expect(beats).not.toBeNull();
      expect(beats!.tempoBpm).toBeGreaterThan(bpm * 0.99);
      expect(beats!.tempoBpm).toBeLessThan(bpm * 1.01);
      const period = 60 / bpm;
      const truth = Array.from({ length: Math.floor(seconds / period + 1e-6) + 1 }, (_, k) => k * period);
      // Every beat found is on a true beat, and every true beat is found.
      for (const t of beats!.times) expect(nearest(truth, t), `beat at ${t.toFixed(3)} s`).toBeLessThan(ON_BEAT_SECONDS);
      for (const t of truth) expect(nearest(beats!.times, t), `true beat at ${t.toFixed(3)} s`).toBeLessThan(ON_BEAT_SECONDS);
      // The bar starts (where the chord and the bass change, with a kick) are the downbeats.
      const bars = truth.filter((_, k) => k % 4 === 0);
      expect(beats!.downbeats.length).toBeGreaterThanOrEqual(bars.length - 1);
      for (const t of beats!.downbeats) expect(nearest(bars, t), `downbeat at ${t.toFixed(3)} s`).toBeLessThan(ON_BEAT_SECONDS);
      expect(playing.every((value) => value === 1)).toBe(true);
    });
  }

  it('finds no beats where nothing keeps time (a held chord, noise, silence), and no band in silence', () => {
    const n = 10 * 16_000;
    let seed = 7;
    const noise = Float32Array.from({ length: n }, () => ((seed = (seed * 16807) % 2147483647) / 2147483647) * 0.4 - 0.2);
    const chord = Float32Array.from({ length: n }, (_, i) => 0.2 * [220, 277, 330].reduce((sum, hz) => sum + Math.sin((2 * Math.PI * hz * i) / 16_000), 0));
    for (const [name, pcm] of Object.entries({ noise, chord, silence: new Float32Array(n) })) expect(trackBand(pcm, 16_000).beats, name).toBeNull();
    expect(trackBand(new Float32Array(n), 16_000).playing.some((value) => value === 1)).toBe(false);
  });
});

describe('where a vocal stem holds a voice', () => {
  const verses = [[2.5, 5.5], [7.5, 10.5]] as const;
  const song = makeSong({ seconds: 12, verses });
  /** What a separator leaves of the band in the vocal stem: the band 50 dB down. */
  const bleed = (pcm: Float32Array) => pcm.map((value, i) => value + song.band[i]! * 10 ** (-50 / 20));
  const bandLoud = trackBand(song.band, SONG_RATE).loudDb;

  it('is on in the verses and off in the instrumental passages; phrases start where the voice comes back', () => {
    const activity = vocalActivity(bleed(song.voice), SONG_RATE, bandLoud);
    expect(activity.found).toBe(true);
    const inVerse = (t: number, margin: number) => verses.some(([start, end]) => t >= start - margin && t < end + margin);
    let versesOn = 0;
    let versesAll = 0;
    activity.active.forEach((on, h) => {
      const t = h / activity.rate;
      if (on) expect(inVerse(t, 0.05), `voice at ${t.toFixed(2)} s`).toBe(true);
      if (inVerse(t, 0)) {
        versesAll++;
        versesOn += on;
      }
    });
    // The tune rests a beat in every phrase (0.54 s): those are off too.
    expect(versesOn / versesAll).toBeGreaterThan(0.7);
    expect(nearest(activity.phraseStarts, 2.5)).toBeLessThan(0.05);
    expect(nearest(activity.phraseStarts, 7.5)).toBeLessThan(0.05);
    // A phrase every line of the tune (7 beats), not every note.
    expect(activity.phraseStarts.length).toBeLessThanOrEqual(6);
  });

  it('finds no voice in an instrumental stem (the band\'s bleed alone), in silence, or in a voice shorter than half a second', () => {
    expect(vocalActivity(bleed(new Float32Array(song.voice.length)), SONG_RATE, bandLoud).found).toBe(false);
    expect(vocalActivity(new Float32Array(song.voice.length), SONG_RATE, bandLoud).found).toBe(false);
    const blip = new Float32Array(song.voice.length);
    blip.set(song.voice.subarray(Math.round(2.5 * SONG_RATE), Math.round(2.8 * SONG_RATE)), Math.round(2.5 * SONG_RATE));
    const none = vocalActivity(bleed(blip), SONG_RATE, bandLoud);
    expect(none.found).toBe(false);
    expect(none.active.some((value) => value === 1)).toBe(false);
    // A voice alone (text-to-speech: no accompaniment to compare with) is a voice.
    expect(vocalActivity(song.voice, SONG_RATE, null).found).toBe(true);
  });
});

describe('life around the song', () => {
  const seconds = 30;
  const frames = seconds * FPS;
  const track = (open: (t: number) => number, singing = 0): VoiceTrack => ({
    fps: FPS,
    frames,
    open: Float32Array.from({ length: frames }, (_, f) => open(f / FPS)),
    round: new Float32Array(frames),
    accent: new Float32Array(frames),
    singing: new Float32Array(frames).fill(singing),
  });
  const period = 0.5;
  const times = Array.from({ length: seconds / period }, (_, k) => k * period);
  const rhythm: Rhythm = { beats: { tempoBpm: 120, times, downbeats: times.filter((_, k) => k % 4 === 0) }, phraseStarts: [] };

  it('blinks only where the mouth is nearly shut: never over a sung vowel', () => {
    // Sung notes of 0.9 s with 0.35 s breaths between them.
    const singing = track((t) => (t % 1.25 < 0.9 ? 0.7 : 0));
    const poses = idlePoses(singing, 200, true, [2.6, 5.4]);
    // The rig draws a blink from 0.02 on (face-rig.ts).
    const blinking = poses.map((pose, f) => ({ f, blink: pose.blink })).filter(({ blink }) => blink > 0.02);
    expect(blinking.length).toBeGreaterThan(0);
    for (const { f } of blinking) expect(singing.open[f], `blink at frame ${f}`).toBeLessThanOrEqual(0.25);
  });

  it('with a band, the head keeps time through an instrumental passage: lowest on each beat, deepest on the downbeats', () => {
    const poses = idlePoses(track(() => 0), 200, true, null, rhythm);
    const y = poses.map((pose) => pose.headY);
    for (const [k, t] of times.entries()) {
      const f = Math.round(t * FPS);
      if (f < 2 || f + 3 > frames) continue;
      // A nod at every beat: the head is lower on the beat than half a beat either side.
      expect(y[f]!, `beat ${k}`).toBeGreaterThan(y[f + 6]! + 0.5);
      expect(y[f]!, `beat ${k}`).toBeGreaterThan(y[f - 6]! + 0.5);
      if (k % 4 === 1) expect(y[f - Math.round(period * FPS)]!, `downbeat before beat ${k}`).toBeGreaterThan(y[f]!);
    }
    // The sway goes both ways.
    expect(Math.min(...poses.map((pose) => pose.headX))).toBeLessThan(-0.5);
    expect(Math.max(...poses.map((pose) => pose.headX))).toBeGreaterThan(0.5);
  });

  it('moves more at a phrase start than on the same beat without one; without a band, a silent pet keeps its head still', () => {
    const phrased = idlePoses(track(() => 0), 200, true, null, { ...rhythm, phraseStarts: [10] });
    const plain = idlePoses(track(() => 0), 200, true, null, rhythm);
    const f = 10 * FPS;
    expect(phrased[f]!.headY).toBeGreaterThan(1.3 * plain[f]!.headY);
    const still = idlePoses(track(() => 0), 200, true, null);
    expect(still.every((pose) => pose.headX === 0 && pose.headY === 0)).toBe(true);
  });
});

describe('reading the stems', () => {
  it('reads a mono 16 kHz 16-bit WAV (as audio preparation writes stems) directly, sample for sample what ffmpeg decodes; anything else through ffmpeg', async () => {
    const dir = await tempDir('stems');
    try {
      const tone = (rate: number, path: string) => run('ffmpeg', ['-nostdin', '-v', 'error', '-y', '-f', 'lavfi', '-i', `sine=f=330:r=${rate}:d=1.5`, '-ac', '1', '-c:a', 'pcm_s16le', path]);
      const stem = join(dir, 'vocals.wav');
      const other = join(dir, 'other.wav');
      await tone(16_000, stem);
      await tone(44_100, other);
      const [direct, viaFfmpeg] = await Promise.all([decodeStem(stem), decodeAudio(stem)]);
      expect(direct.samples.length).toBe(viaFfmpeg.samples.length);
      expect(direct.samples.every((value, i) => value === viaFfmpeg.samples[i])).toBe(true);
      const resampled = await decodeStem(other);
      expect(resampled.sampleRate).toBe(16_000);
      expect(resampled.durationSeconds).toBeCloseTo(1.5, 2);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
