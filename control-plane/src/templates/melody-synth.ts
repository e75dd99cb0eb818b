import { syllablesOf, VOWEL_POSE, type Onset, type Syllable, type Vowel } from './lyrics.ts';
import type { ChordSymbol, PitchName, TemplateDefinition } from './template-catalog.ts';

/** Silence before the first note, so the video opens on a closed mouth. */
const leadInSeconds = 0.3;
/** Silence after the song, so the video ends on a closed mouth. */
const tailSeconds = 0.5;

export interface TimedNote {
  pitch: PitchName | 'rest';
  startBeat: number;
  beats: number;
  startSeconds: number;
  durationSeconds: number;
}

export interface SynthesisOptions {
  sampleRate?: number;
}

const semitoneOfLetter: Record<string, number> = { C: 0, D: 2, E: 4, F: 5, G: 7, A: 9, B: 11 };

function parsePitchClass(letter: string, accidental: string): number {
  const base = semitoneOfLetter[letter];
  if (base === undefined) throw new Error(`Unknown note letter: ${letter}`);
  return base + (accidental === '#' ? 1 : accidental === 'b' ? -1 : 0);
}

/** MIDI note number (60 = middle C). */
function midiOfPitch(pitch: PitchName): number {
  const match = /^([A-G])(#|b)?(\d)$/.exec(pitch);
  if (!match) throw new Error(`Invalid pitch: ${pitch}`);
  return 12 * (Number(match[3]) + 1) + parsePitchClass(match[1] ?? '', match[2] ?? '');
}

function frequencyOfMidi(midi: number): number {
  return 440 * 2 ** ((midi - 69) / 12);
}

export function noteFrequency(pitch: PitchName): number {
  return frequencyOfMidi(midiOfPitch(pitch));
}

function parseChord(chord: ChordSymbol): { rootPitchClass: number; intervals: readonly number[] } {
  const match = /^([A-G])(#|b)?(m|7)?$/.exec(chord);
  if (!match) throw new Error(`Invalid chord: ${chord}`);
  const rootPitchClass = (parsePitchClass(match[1] ?? '', match[2] ?? '') + 12) % 12;
  const quality = match[3];
  const intervals = quality === 'm' ? [0, 3, 7] : quality === '7' ? [0, 4, 7, 10] : [0, 4, 7];
  return { rootPitchClass, intervals };
}

/** The lowest MIDI note at or above `floor` with the given pitch class. */
function placeAbove(pitchClass: number, floor: number): number {
  return floor + ((((pitchClass - floor) % 12) + 12) % 12);
}

function secondsPerBeat(def: TemplateDefinition): number {
  return 60 / def.tempoBpm;
}

function totalBeats(def: TemplateDefinition): number {
  return def.notes.reduce((sum, [, beats]) => sum + beats, 0);
}

export function melodyTimeline(def: TemplateDefinition): TimedNote[] {
  const beatSeconds = secondsPerBeat(def);
  let beat = 0;
  return def.notes.map(([pitch, beats]) => {
    const note = {
      pitch,
      startBeat: beat,
      beats,
      startSeconds: leadInSeconds + beat * beatSeconds,
      durationSeconds: beats * beatSeconds,
    };
    beat += beats;
    return note;
  });
}

export function templateDurationSeconds(def: TemplateDefinition): number {
  return leadInSeconds + totalBeats(def) * secondsPerBeat(def) + tailSeconds;
}

interface Formant {
  frequency: number;
  bandwidth: number;
  gain: number;
}

type FormantSet = readonly [Formant, Formant, Formant];

// Wide resonances: a high voice has few harmonics, and each formant must catch one or two of them
// for the vowel to be heard.
const formants = (f1: number, f2: number, f3: number, bandwidths: readonly number[] = [160, 260, 360]): FormantSet => [
  { frequency: f1, bandwidth: bandwidths[0]!, gain: 1 },
  { frequency: f2, bandwidth: bandwidths[1]!, gain: 0.7 },
  { frequency: f3, bandwidth: bandwidths[2]!, gain: 0.35 },
];

/** The first three formants of each sung vowel (a light, high voice), so "ah", "ee" and "oo" sound like themselves. */
const VOWEL_FORMANTS: Record<Vowel, FormantSet> = {
  a: formants(800, 1150, 2800, [200, 280, 380]),
  e: formants(500, 1750, 2600),
  i: formants(320, 2200, 3000),
  o: formants(500, 850, 2500),
  u: formants(350, 700, 2400),
  schwa: formants(550, 1400, 2500),
};

/**
 * How a syllable starts: from which sound it glides into the vowel, how long that takes, and how
 * loud it is meanwhile (lips hum an "m" before opening, a tongue consonant is a short hush).
 */
const ONSETS: Record<Onset, { from: FormantSet | null; glideSeconds: number; level: number; hushSeconds: number }> = {
  lips: { from: formants(280, 1000, 2200), glideSeconds: 0.06, level: 0.25, hushSeconds: 0 },
  round: { from: VOWEL_FORMANTS.u, glideSeconds: 0.07, level: 0.6, hushSeconds: 0 },
  liquid: { from: formants(360, 1250, 2600), glideSeconds: 0.05, level: 0.5, hushSeconds: 0 },
  tongue: { from: formants(400, 1600, 2600), glideSeconds: 0.03, level: 0.4, hushSeconds: 0.025 },
  none: { from: null, glideSeconds: 0.03, level: 1, hushSeconds: 0 },
};

/** Where a note's sound goes as it ends: towards a closing mouth. */
const CLOSING = formants(320, 800, 2300);

function mixFormants(from: FormantSet, to: FormantSet, amount: number): FormantSet {
  const mix = (a: Formant, b: Formant): Formant => ({
    frequency: a.frequency + (b.frequency - a.frequency) * amount,
    bandwidth: a.bandwidth + (b.bandwidth - a.bandwidth) * amount,
    gain: a.gain + (b.gain - a.gain) * amount,
  });
  return [mix(from[0], to[0]), mix(from[1], to[1]), mix(from[2], to[2])];
}

const highestHarmonicHz = 5000;
const maxHarmonics = 40;
const controlBlockSamples = 32;
const vibratoRateHz = 5.5;
const vibratoDepth = 0.01;
const voiceGain = 0.5;

/** Harmonic amplitudes (index 1..count) shaped by three formants, normalised to unit energy. */
function harmonicAmplitudes(fundamental: number, shape: FormantSet, into: Float64Array): void {
  let energy = 0;
  for (let k = 1; k < into.length; k += 1) {
    const frequency = k * fundamental;
    let resonance = 0.08;
    for (const formant of shape) {
      const offset = (frequency - formant.frequency) / (formant.bandwidth / 2);
      resonance += formant.gain / (1 + offset * offset);
    }
    const amplitude = resonance / k ** 1.1;
    into[k] = amplitude;
    energy += amplitude * amplitude;
  }
  const scale = 1 / Math.sqrt(energy);
  for (let k = 1; k < into.length; k += 1) into[k] = into[k]! * scale;
}

function smoothStep(x: number): number {
  const clamped = Math.min(1, Math.max(0, x));
  return clamped * clamped * (3 - 2 * clamped);
}

/** Sings one syllable on one note: its onset glides into its vowel, held, then closing at the end. */
function singNote(out: Float32Array, startSample: number, lengthSamples: number, fundamental: number, loudness: number, syllable: Syllable, sampleRate: number): void {
  const lengthSeconds = lengthSamples / sampleRate;
  const onset = ONSETS[syllable.onset];
  const vowel = VOWEL_FORMANTS[syllable.vowel];
  const hush = Math.min(onset.hushSeconds, lengthSeconds * 0.2);
  const glide = Math.min(onset.glideSeconds, lengthSeconds * 0.3);
  const attack = Math.min(0.03, lengthSeconds * 0.25);
  const release = Math.min(0.08, lengthSeconds * 0.3);
  const releaseStart = lengthSeconds - release;
  const harmonicCount = Math.max(1, Math.min(maxHarmonics, Math.floor(highestHarmonicHz / fundamental)));

  const shapeAt = (t: number): FormantSet => {
    const entered = onset.from ? mixFormants(onset.from, vowel, smoothStep((t - hush) / glide)) : vowel;
    return mixFormants(entered, CLOSING, 0.6 * smoothStep((t - releaseStart) / release));
  };
  const envelopeAt = (t: number): number => {
    if (t < hush) return 0;
    const sounding = t - hush;
    const rise = sounding < attack ? 0.5 - 0.5 * Math.cos((Math.PI * sounding) / attack) : 1;
    const consonant = onset.level + (1 - onset.level) * smoothStep(sounding / glide);
    const settle = 1 - 0.12 * (1 - Math.exp(-Math.max(0, sounding - attack) / 0.3));
    const fall = t > releaseStart ? 0.5 + 0.5 * Math.cos((Math.PI * (t - releaseStart)) / release) : 1;
    return rise * consonant * settle * fall;
  };

  let current = new Float64Array(harmonicCount + 1);
  let next = new Float64Array(harmonicCount + 1);
  harmonicAmplitudes(fundamental, shapeAt(0), current);
  let phase = 0;
  for (let blockStart = 0; blockStart < lengthSamples; blockStart += controlBlockSamples) {
    const blockEnd = Math.min(lengthSamples, blockStart + controlBlockSamples);
    harmonicAmplitudes(fundamental, shapeAt(blockEnd / sampleRate), next);
    const blockLength = blockEnd - blockStart;
    for (let n = blockStart; n < blockEnd; n += 1) {
      const t = n / sampleRate;
      // Singers land slightly flat and slide up, and vibrato only blooms once the note is held.
      const scoop = 2 ** ((-0.4 / 12) * (1 - smoothStep(t / 0.06)));
      const vibrato = 1 + vibratoDepth * smoothStep((t - 0.15) / 0.25) * Math.sin(2 * Math.PI * vibratoRateHz * t);
      phase += (2 * Math.PI * fundamental * scoop * vibrato) / sampleRate;
      if (phase > 2 * Math.PI) phase -= 2 * Math.PI;

      // sin(k·phase) by the Chebyshev recurrence: one sin/cos per sample instead of one per harmonic.
      const sine = Math.sin(phase);
      const twoCos = 2 * Math.cos(phase);
      const mix = (n - blockStart) / blockLength;
      let previous = 0;
      let harmonic = sine;
      let sample = 0;
      for (let k = 1; k <= harmonicCount; k += 1) {
        const amplitude = current[k]! + (next[k]! - current[k]!) * mix;
        sample += amplitude * harmonic;
        const following = twoCos * harmonic - previous;
        previous = harmonic;
        harmonic = following;
      }
      const index = startSample + n;
      out[index] = out[index]! + voiceGain * loudness * envelopeAt(t) * sample;
    }
    [current, next] = [next, current];
  }
}

/** Two channels of equal length: left, right. */
type Stereo = readonly [left: Float32Array, right: Float32Array];

/** How far the notes of a chord spread from the middle (−1 left … 1 right). */
const CHORD_SPREAD = 0.8;

/**
 * Constant-power gains of a sound placed at `pan` (−1 left … 1 right), with a sound in the middle at full level in both
 * channels, as in the mono mix.
 */
function panGains(pan: number): [number, number] {
  const angle = ((pan + 1) * Math.PI) / 4;
  return [Math.SQRT2 * Math.cos(angle), Math.SQRT2 * Math.sin(angle)];
}

/** A soft, quickly decaying tone, like a muted piano or harp string, placed at `pan`. */
function pluck(out: Stereo, startSample: number, frequency: number, amplitude: number, decaySeconds: number, sampleRate: number, pan = 0): void {
  const [left, right] = out;
  const [leftGain, rightGain] = panGains(pan);
  const length = Math.min(left.length - startSample, Math.round(decaySeconds * 5 * sampleRate));
  const step = (2 * Math.PI * frequency) / sampleRate;
  for (let n = 0; n < length; n += 1) {
    const t = n / sampleRate;
    const phase = step * n;
    const envelope = (1 - Math.exp(-t / 0.004)) * Math.exp(-t / decaySeconds);
    const sample = amplitude * envelope * (Math.sin(phase) + 0.25 * Math.sin(2 * phase) + 0.08 * Math.sin(3 * phase));
    const index = startSample + n;
    left[index] = left[index]! + leftGain * sample;
    right[index] = right[index]! + rightGain * sample;
  }
}

function chordAt(def: TemplateDefinition, beat: number): ChordSymbol {
  let chordStart = 0;
  for (const [chord, beats] of def.chords) {
    if (beat < chordStart + beats) return chord;
    chordStart += beats;
  }
  throw new Error(`Template ${def.id} has no chord at beat ${beat}`);
}

/** Oom-pah: even pulses of a bar play the bass in the middle (root on the downbeat, fifth after), odd pulses the chord, its notes spread low-left to high-right. */
function accompany(def: TemplateDefinition, out: Stereo, rests: readonly TimedNote[], sampleRate: number): void {
  const beatSeconds = secondsPerBeat(def);
  const pulsesPerBar = Math.round(def.beatsPerBar / def.pulseBeats);
  const pulseCount = Math.round(totalBeats(def) / def.pulseBeats);
  for (let pulse = 0; pulse < pulseCount; pulse += 1) {
    const beat = pulse * def.pulseBeats;
    if (rests.some((rest) => beat >= rest.startBeat && beat < rest.startBeat + rest.beats)) continue;
    const { rootPitchClass, intervals } = parseChord(chordAt(def, beat));
    const startSample = Math.round((leadInSeconds + beat * beatSeconds) * sampleRate);
    const pulseInBar = pulse % pulsesPerBar;
    if (pulseInBar % 2 === 0) {
      const root = placeAbove(rootPitchClass, 36);
      pluck(out, startSample, frequencyOfMidi(pulseInBar === 0 ? root : root + 7), 0.16, 0.6, sampleRate);
    } else {
      intervals.forEach((interval, index) => {
        const pan = CHORD_SPREAD * ((2 * index) / (intervals.length - 1) - 1);
        pluck(out, startSample, frequencyOfMidi(placeAbove(rootPitchClass + interval, 52)), 0.045, 0.35, sampleRate, pan);
      });
    }
  }
}

/**
 * 1 while the melody sings, 0 during rests and after the song, so silences are near-silent and the
 * pet's mouth closes.
 */
function silenceGate(silences: readonly { startSeconds: number; durationSeconds: number }[], length: number, sampleRate: number): Float32Array {
  const gate = new Float32Array(length).fill(1);
  const fadeOut = Math.round(0.03 * sampleRate);
  const fadeIn = Math.round(0.01 * sampleRate);
  for (const silence of silences) {
    const start = Math.round(silence.startSeconds * sampleRate);
    const end = Math.min(length, Math.round((silence.startSeconds + silence.durationSeconds) * sampleRate));
    for (let n = start; n < end; n += 1) {
      gate[n] = n - start < fadeOut ? Math.min(gate[n]!, 0.5 + 0.5 * Math.cos((Math.PI * (n - start)) / fadeOut)) : 0;
    }
    for (let n = end; n < Math.min(length, end + fadeIn); n += 1) {
      gate[n] = Math.min(gate[n]!, 0.5 - 0.5 * Math.cos((Math.PI * (n - end)) / fadeIn));
    }
  }
  return gate;
}

const peakLevel = 0.89;

/** A sung note and the syllable it carries. */
export interface SungNote {
  note: TimedNote & { pitch: PitchName };
  syllable: Syllable;
}

/** Pairs the melody's sung notes with the lyrics' syllables, one each. */
export function sungNotes(def: TemplateDefinition): SungNote[] {
  const notes = melodyTimeline(def).filter((note): note is TimedNote & { pitch: PitchName } => note.pitch !== 'rest');
  const syllables = syllablesOf(def.lyrics);
  if (syllables.length !== notes.length) {
    throw new Error(`Template ${def.id}: the lyrics have ${syllables.length} syllables but the melody sings ${notes.length} notes`);
  }
  return notes.map((note, index) => ({ note, syllable: syllables[index]! }));
}

/** A short breath at the end of each note keeps repeated pitches audibly separate syllables. */
function breathAfter(note: TimedNote): number {
  return Math.min(0.06, note.durationSeconds * 0.15);
}

/** A point of the mouth's motion: seconds from the start, openness and roundness (0-1). */
export type MouthKeyframe = [seconds: number, open: number, round: number];

/**
 * The pet's mouth for a template, straight from the score: each syllable opens to its vowel's shape
 * as the voice enters it (from shut lips for m, b and p), holds, and closes as the note ends; rests
 * and the lead-in and tail are closed. The render follows these instead of listening to the song.
 */
export function mouthKeyframes(def: TemplateDefinition): MouthKeyframe[] {
  const keyframes: MouthKeyframe[] = [[0, 0, 0]];
  let lastEnd = 0;
  for (const { note, syllable } of sungNotes(def)) {
    const pose = VOWEL_POSE[syllable.vowel];
    const accent = note.startBeat % def.beatsPerBar === 0 ? 1 : 0.9;
    const onset = ONSETS[syllable.onset];
    const end = note.startSeconds + note.durationSeconds - breathAfter(note);
    const length = end - note.startSeconds;
    const entered = note.startSeconds + Math.min(onset.hushSeconds, length * 0.2) + Math.min(onset.glideSeconds, length * 0.3);
    const closing = end - Math.min(0.08, length * 0.3);
    // Over a rest (or the lead-in) the mouth shuts, and stays shut until the next syllable.
    if (note.startSeconds - lastEnd > 0.2) {
      if (lastEnd > 0) keyframes.push([lastEnd + 0.06, 0, 0]);
      keyframes.push([note.startSeconds - 0.02, 0, 0]);
    }
    keyframes.push([note.startSeconds, syllable.onset === 'lips' ? 0 : 0.25 * pose.open, syllable.onset === 'round' ? 1 : pose.round]);
    keyframes.push([entered, pose.open * accent, pose.round]);
    keyframes.push([closing, 0.85 * pose.open * accent, pose.round]);
    keyframes.push([end, 0.1, pose.round]);
    lastEnd = end;
  }
  keyframes.push([lastEnd + 0.06, 0, 0], [templateDurationSeconds(def), 0, 0]);
  return keyframes.map(([seconds, open, round]) => [Math.round(seconds * 1000) / 1000, Math.round(open * 100) / 100, Math.round(round * 100) / 100]);
}

/** The sung vocal line alone: each syllable of the lyrics on its note. */
export function synthesizeVoice(def: TemplateDefinition, sampleRate: number): Float32Array {
  const voice = new Float32Array(Math.round(templateDurationSeconds(def) * sampleRate));
  for (const { note, syllable } of sungNotes(def)) {
    const gapSeconds = breathAfter(note);
    const startSample = Math.round(note.startSeconds * sampleRate);
    const lengthSamples = Math.round((note.durationSeconds - gapSeconds) * sampleRate);
    const onDownbeat = note.startBeat % def.beatsPerBar === 0;
    singNote(voice, startSample, lengthSamples, noteFrequency(note.pitch), onDownbeat ? 1 : 0.85, syllable, sampleRate);
  }

  return voice;
}

/** A template's song: the stereo mix, and its voice alone at the level it has in the mix (mono). */
export interface Song {
  mix: Stereo;
  voice: Float32Array;
}

/**
 * The song in stereo, in [-1, 1]: the voice and bass in the middle, each chord spread across; and its voice alone,
 * which the pet's mouth follows. Pure arithmetic with no randomness, so the output is identical on every run.
 */
export function synthesizeSong(def: TemplateDefinition, { sampleRate = 44100 }: SynthesisOptions = {}): Song {
  const chordBeats = def.chords.reduce((sum, [, beats]) => sum + beats, 0);
  if (chordBeats !== totalBeats(def)) {
    throw new Error(`Template ${def.id}: chords cover ${chordBeats} beats but the melody has ${totalBeats(def)}`);
  }
  const length = Math.round(templateDurationSeconds(def) * sampleRate);
  const timeline = melodyTimeline(def);
  const rests = timeline.filter((note) => note.pitch === 'rest');

  const voice = synthesizeVoice(def, sampleRate);
  const accompaniment: Stereo = [new Float32Array(length), new Float32Array(length)];
  accompany(def, accompaniment, rests, sampleRate);
  const songEndSeconds = templateDurationSeconds(def) - tailSeconds;
  const gate = silenceGate([...rests, { startSeconds: songEndSeconds, durationSeconds: tailSeconds }], length, sampleRate);

  const mix: Stereo = [new Float32Array(length), new Float32Array(length)];
  let peak = 0;
  for (const [channel, played] of accompaniment.entries()) {
    for (let n = 0; n < length; n += 1) {
      const sample = voice[n]! + played[n]! * gate[n]!;
      mix[channel]![n] = sample;
      peak = Math.max(peak, Math.abs(sample));
    }
  }
  const scale = peak > 0 ? peakLevel / peak : 0;
  for (const samples of [...mix, voice]) for (let n = 0; n < length; n += 1) samples[n] = samples[n]! * scale;
  return { mix, voice };
}

/** 16-bit little-endian PCM WAV of one channel, or of several of equal length (interleaved). */
export function encodeWav(pcm: Float32Array | readonly Float32Array[], sampleRate: number): Buffer {
  const channels = pcm instanceof Float32Array ? [pcm] : pcm;
  const frames = channels[0]!.length;
  const blockBytes = 2 * channels.length;
  const dataBytes = frames * blockBytes;
  const wav = Buffer.alloc(44 + dataBytes);
  wav.write('RIFF', 0, 'ascii');
  wav.writeUInt32LE(36 + dataBytes, 4);
  wav.write('WAVE', 8, 'ascii');
  wav.write('fmt ', 12, 'ascii');
  wav.writeUInt32LE(16, 16);
  wav.writeUInt16LE(1, 20);
  wav.writeUInt16LE(channels.length, 22);
  wav.writeUInt32LE(sampleRate, 24);
  wav.writeUInt32LE(sampleRate * blockBytes, 28);
  wav.writeUInt16LE(blockBytes, 32);
  wav.writeUInt16LE(16, 34);
  wav.write('data', 36, 'ascii');
  wav.writeUInt32LE(dataBytes, 40);
  for (let n = 0; n < frames; n += 1) {
    for (const [channel, samples] of channels.entries()) {
      const clamped = Math.max(-1, Math.min(1, samples[n]!));
      wav.writeInt16LE(Math.round(clamped * 32767), 44 + n * blockBytes + channel * 2);
    }
  }
  return wav;
}
