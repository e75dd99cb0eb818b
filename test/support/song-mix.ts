import { spawn } from 'node:child_process';
import { synthesizeVoice } from '../../control-plane/src/templates/melody-synth.ts';
import { templateCatalog } from '../../control-plane/src/templates/template-catalog.ts';
import { pearson } from '../../render-node/test/helpers.ts';

/**
 * Songs made for tests and benchmarks, with their parts kept apart: a band (kick, snare, hi-hat, bass, a chord pad)
 * that plays throughout, and a voice that sings only in the verses, so what a vocal separator or a mouth driver
 * should find is known sample by sample. Everything is deterministic (a seeded noise source); the voice is a
 * synthesized singer (`singingVoice`), the template songs' synthesizer (`templateVoice`) or espeak-ng (`spokenVoice`).
 */
export const SONG_RATE = 44_100;

export interface Song {
  sampleRate: number;
  /** The stereo mix: the band's instruments panned, the voice in the centre. */
  left: Float32Array;
  right: Float32Array;
  /** The voice alone, as it sits in each channel of the mix (mono). */
  voice: Float32Array;
  /** The band alone, mono (the channels' mean). */
  band: Float32Array;
  /** Where the voice sings, in seconds; the rest is band only. */
  verses: ReadonlyArray<readonly [number, number]>;
}

export interface SongOptions {
  seconds: number;
  /** [start, end) seconds of each verse. */
  verses: ReadonlyArray<readonly [number, number]>;
  tempoBpm?: number;
  /** The voice's RMS over the verses against the band's over the same time, in dB. */
  voiceToBandDb?: number;
  /** A mono voice at SONG_RATE to place in the verses (cut to each, in turn); default: `singingVoice` at the band's tempo. */
  voice?: Float32Array;
  seed?: number;
}

/** A seeded uniform source in [-1, 1) (mulberry32). */
function noiseSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
  };
}

/** The bass and pad's chord roots (A minor, F, C, G), one a bar. */
const ROOTS_HZ = [110, 87.31, 130.81, 98];
const CHORD_RATIOS = [1, 1.1892, 1.4983]; // root, minor third, fifth

/** The band: per instrument (mono) and where it sits between left (-1) and right (1). */
function band(seconds: number, tempoBpm: number, random: () => number): Array<{ pcm: Float32Array; pan: number }> {
  const length = Math.round(seconds * SONG_RATE);
  const beat = 60 / tempoBpm;
  const kick = new Float32Array(length);
  const snare = new Float32Array(length);
  const hat = new Float32Array(length);
  const bass = new Float32Array(length);
  const pad = new Float32Array(length);
  const addAt = (out: Float32Array, startSeconds: number, durationSeconds: number, sample: (t: number) => number) => {
    const start = Math.round(startSeconds * SONG_RATE);
    const end = Math.min(length, start + Math.round(durationSeconds * SONG_RATE));
    for (let i = Math.max(0, start); i < end; i++) out[i] = out[i]! + sample((i - start) / SONG_RATE);
  };
  let previousHat = 0;
  for (let b = 0; b * beat < seconds; b++) {
    const at = b * beat;
    const bar = Math.floor(b / 4);
    if (b % 2 === 0) {
      // A kick: a sine falling from 150 to 50 Hz, decaying in a fifth of a second.
      let phase = 0;
      addAt(kick, at, 0.35, (t) => {
        phase += (2 * Math.PI * (50 + 100 * Math.exp(-t / 0.04))) / SONG_RATE;
        return 0.9 * Math.exp(-t / 0.12) * Math.sin(phase);
      });
    } else {
      // A snare: a noise burst over a 190 Hz body.
      addAt(snare, at, 0.25, (t) => Math.exp(-t / 0.06) * (0.45 * random() + 0.3 * Math.sin(2 * Math.PI * 190 * t)));
    }
    for (const half of [0, 0.5]) {
      // A closed hi-hat every eighth: high-passed noise (the difference of successive samples), 40 ms.
      addAt(hat, at + half * beat, 0.05, (t) => {
        const white = random();
        const high = white - previousHat;
        previousHat = white;
        return 0.18 * Math.exp(-t / 0.015) * high;
      });
    }
    const root = ROOTS_HZ[bar % ROOTS_HZ.length]!;
    // The bass: the bar's root on every beat, a soft square-ish tone.
    addAt(bass, at, beat * 0.9, (t) => {
      const phase = 2 * Math.PI * root * t;
      return 0.35 * Math.min(1, t / 0.01) * Math.exp(-t / 0.6) * (Math.sin(phase) + 0.3 * Math.sin(3 * phase) + 0.15 * Math.sin(5 * phase));
    });
  }
  // The pad: the bar's triad two octaves up, slow to swell, with slightly detuned pairs.
  for (let bar = 0; bar * 4 * beat < seconds; bar++) {
    const root = ROOTS_HZ[bar % ROOTS_HZ.length]! * 4;
    const barSeconds = 4 * beat;
    addAt(pad, bar * barSeconds, barSeconds, (t) => {
      const swell = Math.min(1, t / 0.3) * Math.min(1, (barSeconds - t) / 0.1);
      let sum = 0;
      for (const ratio of CHORD_RATIOS) for (const detune of [0.997, 1.003]) sum += Math.sin(2 * Math.PI * root * ratio * detune * t);
      return 0.035 * swell * sum;
    });
  }
  return [
    { pcm: kick, pan: 0 },
    { pcm: snare, pan: 0.1 },
    { pcm: hat, pan: 0.5 },
    { pcm: bass, pan: 0 },
    { pcm: pad, pan: -0.3 },
  ];
}

/** The first five formants' centres of five sung vowels (a, e, i, o, u), Hz. */
const SUNG_VOWELS = [[800, 1200, 2500, 3500], [400, 2000, 2600, 3500], [300, 2300, 3000, 3700], [500, 900, 2400, 3400], [350, 800, 2300, 3300]] as const;
const FORMANT_BANDWIDTHS = [80, 100, 140, 180];
const FORMANT_GAINS = [1, 0.6, 0.35, 0.2];
/** A tune in A minor, [MIDI note, beats] (0: a rest), sung an octave below as written (an alto). */
const TUNE: ReadonlyArray<readonly [number, number]> = [[69, 1], [72, 1], [76, 1], [74, 1], [72, 2], [0, 1], [71, 1], [72, 1], [74, 1], [76, 1], [69, 2], [0, 1], [76, 1], [77, 1], [76, 1], [74, 1], [72, 2], [0, 1]];

/**
 * A singer, `seconds` long: a glottal pulse train with vibrato (5.6 Hz, ±2.5%), jitter and breath noise, through four
 * formant resonators of a vowel per note, each note opened by a short hiss. The template songs' voice
 * (`templateVoice`) is cleaner, and Spleeter takes much of it for an instrument; this one it hears as a voice.
 */
export function singingVoice(seconds: number, tempoBpm = 112, seed = 3): Float32Array {
  const out = new Float32Array(Math.round(seconds * SONG_RATE));
  const random = noiseSource(seed);
  const beat = 60 / tempoBpm;
  let at = 0;
  for (let note = 0; at < seconds; note++) {
    const [midi, beats] = TUNE[note % TUNE.length]!;
    const duration = beats * beat;
    if (midi > 0) singNote(out, Math.round(at * SONG_RATE), Math.round((duration - 0.06) * SONG_RATE), 440 * 2 ** ((midi - 81) / 12), SUNG_VOWELS[note % SUNG_VOWELS.length]!, random);
    at += duration;
  }
  return out;
}

function singNote(out: Float32Array, start: number, length: number, f0: number, vowel: readonly number[], random: () => number): void {
  const hiss = Math.round(0.05 * SONG_RATE);
  const y1 = [0, 0, 0, 0];
  const y2 = [0, 0, 0, 0];
  let phase = 0;
  let shimmer = 1;
  let low = 0;
  for (let n = 0; n < length && start + n < out.length; n++) {
    const t = n / SONG_RATE;
    const vibrato = 1 + 0.025 * Math.min(1, t / 0.3) * Math.sin(2 * Math.PI * 5.6 * t);
    phase += (f0 * vibrato * (1 + 0.004 * random())) / SONG_RATE;
    if (phase >= 1) {
      phase -= 1;
      shimmer = 1 + 0.05 * random();
    }
    // The glottis opens smoothly over 60% of a cycle and closes sharply; breath noise while it is open.
    const open = phase < 0.6 ? 0.5 - 0.5 * Math.cos((Math.PI * phase) / 0.6) : Math.cos((Math.PI * (phase - 0.6)) / 0.8);
    low = 0.9 * low + 0.1 * random();
    const breath = 0.08 * (random() - low) * (phase < 0.6 ? 1 : 0.3);
    const envelope = Math.min(1, n / (0.04 * SONG_RATE)) * Math.min(1, (length - n) / (0.05 * SONG_RATE));
    let source = ((open - 0.4) * shimmer + breath) * envelope;
    if (n < hiss) source = source * (n / hiss) + 0.25 * random() * (1 - n / hiss);
    let sample = 0;
    for (let k = 0; k < 4; k++) {
      const r = Math.exp((-Math.PI * FORMANT_BANDWIDTHS[k]!) / SONG_RATE);
      const value = (1 - r) * FORMANT_GAINS[k]! * source + 2 * r * Math.cos((2 * Math.PI * vowel[k]!) / SONG_RATE) * y1[k]! - r * r * y2[k]!;
      y2[k] = y1[k]!;
      y1[k] = value;
      sample += value;
    }
    out[start + n] = out[start + n]! + sample;
  }
}

/** The template songs' singing synthesizer (the first template's tune), `seconds` long, repeated as needed. */
export function templateVoice(seconds: number): Float32Array {
  const line = synthesizeVoice(templateCatalog[0]!, SONG_RATE);
  const out = new Float32Array(Math.round(seconds * SONG_RATE));
  for (let i = 0; i < out.length; i++) out[i] = line[i % line.length]!;
  return out;
}

/** espeak-ng speaking `text` (its own 22.05 kHz, resampled to SONG_RATE by ffmpeg), mono. */
export async function spokenVoice(text: string): Promise<Float32Array> {
  const wav = await collect('espeak-ng', ['-v', 'en-us', '-s', '150', '--stdout', text]);
  const raw = await collect('ffmpeg', ['-v', 'error', '-i', 'pipe:0', '-ac', '1', '-ar', String(SONG_RATE), '-f', 'f32le', 'pipe:1'], wav);
  return new Float32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
}

function collect(command: string, args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let stderr = '';
    child.stdout!.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(chunks)) : reject(new Error(`${command} exited ${code}: ${stderr.slice(-500)}`))));
    if (input && child.stdin) child.stdin.end(input);
  });
}

const rms = (pcm: Float32Array, from = 0, to = pcm.length) => {
  let sum = 0;
  for (let i = from; i < to; i++) sum += pcm[i]! * pcm[i]!;
  return Math.sqrt(sum / Math.max(1, to - from));
};

/** A song: the band throughout, the voice in the verses at `voiceToBandDb` (default 0 dB), peaking at 0.9. */
export function makeSong(options: SongOptions): Song {
  const { seconds, verses, tempoBpm = 112, voiceToBandDb = 0, seed = 1 } = options;
  const length = Math.round(seconds * SONG_RATE);
  const random = noiseSource(seed);
  const parts = band(seconds, tempoBpm, random);
  const left = new Float32Array(length);
  const right = new Float32Array(length);
  const bandMono = new Float32Array(length);
  for (const { pcm, pan } of parts) {
    // Constant-power panning.
    const angle = ((pan + 1) * Math.PI) / 4;
    for (let i = 0; i < length; i++) {
      left[i] = left[i]! + Math.cos(angle) * pcm[i]!;
      right[i] = right[i]! + Math.sin(angle) * pcm[i]!;
    }
  }
  for (let i = 0; i < length; i++) bandMono[i] = (left[i]! + right[i]!) / 2;

  const source = options.voice ?? singingVoice(seconds, tempoBpm);
  const voice = new Float32Array(length);
  let read = 0;
  for (const [start, end] of verses) {
    const from = Math.round(start * SONG_RATE);
    const to = Math.min(length, Math.round(end * SONG_RATE));
    const fade = Math.round(0.02 * SONG_RATE);
    for (let i = from; i < to; i++, read++) {
      const edge = Math.min(1, (i - from) / fade, (to - 1 - i) / fade);
      voice[i] = source[read % source.length]! * Math.max(0, edge);
    }
  }
  // Level the voice against the band over the verses.
  let voiceEnergy = 0;
  let bandEnergy = 0;
  for (const [start, end] of verses) {
    const from = Math.round(start * SONG_RATE);
    const to = Math.min(length, Math.round(end * SONG_RATE));
    voiceEnergy += rms(voice, from, to) ** 2 * (to - from);
    bandEnergy += rms(bandMono, from, to) ** 2 * (to - from);
  }
  const gain = voiceEnergy > 0 ? Math.sqrt(bandEnergy / voiceEnergy) * 10 ** (voiceToBandDb / 20) : 0;
  let peak = 0;
  for (let i = 0; i < length; i++) {
    voice[i] = voice[i]! * gain;
    left[i] = left[i]! + voice[i]!;
    right[i] = right[i]! + voice[i]!;
    peak = Math.max(peak, Math.abs(left[i]!), Math.abs(right[i]!));
  }
  const scale = peak > 0 ? 0.9 / peak : 1;
  for (const pcm of [left, right, voice, bandMono]) for (let i = 0; i < length; i++) pcm[i] = pcm[i]! * scale;
  return { sampleRate: SONG_RATE, left, right, voice, band: bandMono, verses };
}

/** Interleaved 16-bit stereo WAV of the mix, for feeding a service or ffmpeg. */
export function songWav(song: Song): Buffer {
  const frames = song.left.length;
  const wav = Buffer.alloc(44 + frames * 4);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + frames * 4, 4);
  wav.write('WAVEfmt ', 8, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(2, 22);
  wav.writeUInt32LE(song.sampleRate, 24);
  wav.writeUInt32LE(song.sampleRate * 4, 28);
  wav.writeUInt16LE(4, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(frames * 4, 40);
  const clamp = (x: number) => Math.round(Math.max(-1, Math.min(1, x)) * 32767);
  for (let i = 0; i < frames; i++) {
    wav.writeInt16LE(clamp(song.left[i]!), 44 + i * 4);
    wav.writeInt16LE(clamp(song.right[i]!), 46 + i * 4);
  }
  return wav;
}

/** RMS per video frame (1/fps s windows) of a mono signal: the loudness a mouth should follow. */
export function frameEnvelope(pcm: Float32Array, sampleRate: number, fps = 25): Float32Array {
  const step = sampleRate / fps;
  const frames = Math.floor(pcm.length / step);
  return Float32Array.from({ length: frames }, (_, f) => rms(pcm, Math.round(f * step), Math.round((f + 1) * step)));
}

/** Pearson's r of two series (over the shorter's length). */
export const correlation = (a: ArrayLike<number>, b: ArrayLike<number>): number => pearson(Array.from(a), Array.from(b));

/** Signal-to-distortion ratio of an estimate against the true signal, in dB (10·log10 Σs² / Σ(s - ŝ)²). */
export function sdr(truth: Float32Array, estimate: Float32Array): number {
  let signal = 0;
  let error = 0;
  const n = Math.min(truth.length, estimate.length);
  for (let i = 0; i < n; i++) {
    signal += truth[i]! ** 2;
    error += (truth[i]! - estimate[i]!) ** 2;
  }
  return 10 * Math.log10(signal / error);
}

/** The mean of a signal's RMS over the given spans against its RMS over the rest, in dB (how much louder the spans are). */
export function spanLoudnessDb(pcm: Float32Array, sampleRate: number, spans: ReadonlyArray<readonly [number, number]>, marginSeconds = 0.25): { inside: number; outside: number; differenceDb: number } {
  let insideEnergy = 0;
  let insideCount = 0;
  let outsideEnergy = 0;
  let outsideCount = 0;
  for (let i = 0; i < pcm.length; i++) {
    const t = i / sampleRate;
    const within = spans.some(([start, end]) => t >= start && t < end);
    const near = spans.some(([start, end]) => t >= start - marginSeconds && t < end + marginSeconds);
    if (within) {
      insideEnergy += pcm[i]! ** 2;
      insideCount++;
    } else if (!near) {
      outsideEnergy += pcm[i]! ** 2;
      outsideCount++;
    }
  }
  const inside = Math.sqrt(insideEnergy / Math.max(1, insideCount));
  const outside = Math.sqrt(outsideEnergy / Math.max(1, outsideCount));
  return { inside, outside, differenceDb: 20 * Math.log10(inside / Math.max(outside, 1e-12)) };
}
