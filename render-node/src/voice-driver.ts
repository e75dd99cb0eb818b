import type { MouthTrack } from '@petsing/workflows';
import { fftPlan } from './fft.ts';
import { envelope, hopOf, percentile, perFrame, slidingExtreme } from './signal.ts';
import type { VocalActivity } from '@petsing/platform/audio';

/**
 * What the voice asks of the face in each video frame. `open` and `round` shape the mouth (0-1);
 * `accent` marks syllable onsets (0-1, decays quickly) and `singing` is the slow envelope of
 * phrases (0-1), which the head motion follows.
 */
export interface VoiceTrack {
  fps: number;
  frames: number;
  open: Float32Array;
  round: Float32Array;
  accent: Float32Array;
  singing: Float32Array;
}

const WINDOW = 256;
/** The band a singing or speaking voice fills (fundamental to upper formants); kick drums and cymbals mostly fall outside. */
const VOICE_BAND_HZ = [180, 4000] as const;
/** Below this, energy is mostly the first formant; open vowels put more here, rounded ones pull the centroid down. */
const FIRST_FORMANT_TOP_HZ = 1000;
/** The loudness range mapped to a closed → fully open mouth, below the clip's loud level (dB). */
const OPEN_RANGE_DB = 30;
/** A mouth opens like a singer's (tens of milliseconds) and closes a little slower. */
const ATTACK_SECONDS = 0.03;
const RELEASE_SECONDS = 0.08;
/** The phrase envelope the head follows: it starts moving within a quarter second and settles half a second into a pause. */
const SINGING_ENVELOPE = { attack: 0.25, release: 0.5 } as const;
/** On a held note the jaw keeps moving a little (a singer's vibrato and breath), never frozen open. */
const SUSTAIN_WOBBLE = { amount: 0.12, hertz: 4.7 } as const;

/**
 * A sine this quiet (-60 dBFS) is silence however the clip is normalised; as band power of one
 * Hann-windowed frame (main lobe: (A·N/4)² plus two neighbours of (A·N/8)²), in dB.
 */
const QUIETEST_AMPLITUDE = 0.001;
const QUIETEST_DB = 10 * Math.log10(QUIETEST_AMPLITUDE ** 2 * WINDOW ** 2 * (3 / 32));
/** Anything this far under the clip's loud level, or under the quietest sound, is silence (dB). */
const silenceDb = (loud: number) => Math.max(loud - 45, QUIETEST_DB);
/** The accompaniment's floor is the quietest level within this window around each moment; a held note shorter than half of it keeps its mouth open. */
const BED_WINDOW_SECONDS = 4;
/** The voice must rise this far over that floor to open the mouth at all, and this much more to open it fully (dB). */
const BED_MARGIN_DB = 3;
const BED_RANGE_DB = 18;

/**
 * Turns a clip into mouth and head motion, driven by the voice: the voice band's loudness
 * normalised to the clip (so a quiet recording sings as wide as a loud one), syllable onsets from
 * the band's spectral flux, and the vowel's shape from where its energy sits (open vowels are loud
 * in the first formant, rounded ones have a low spectral centroid). With the voice's `activity` (a vocal stem's,
 * vocal-activity.ts) the mouth opens only where a voice sings: elsewhere it rests, whatever the stem holds.
 */
export function voiceTrack(samples: Float32Array, sampleRate: number, fps: number, frames: number, activity?: VocalActivity): VoiceTrack {
  const { hop, rate } = hopOf(sampleRate);
  const hops = Math.max(1, Math.ceil(samples.length / hop));
  const plan = fftPlan(WINDOW);
  const hann = Float64Array.from({ length: WINDOW }, (_, i) => 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / WINDOW));
  const binHz = sampleRate / WINDOW;
  const lowBin = Math.ceil(VOICE_BAND_HZ[0] / binHz);
  const highBin = Math.min(WINDOW / 2, Math.floor(VOICE_BAND_HZ[1] / binHz));
  const formantBin = Math.floor(FIRST_FORMANT_TOP_HZ / binHz);

  const level = new Float32Array(hops);
  const flux = new Float32Array(hops);
  const centroid = new Float32Array(hops);
  const firstFormantShare = new Float32Array(hops);
  const re = new Float64Array(WINDOW);
  const im = new Float64Array(WINDOW);
  let previous = new Float64Array(highBin + 1);
  let current = new Float64Array(highBin + 1);
  for (let h = 0; h < hops; h++) {
    const start = h * hop - WINDOW / 2;
    for (let i = 0; i < WINDOW; i++) {
      const s = start + i;
      re[i] = s >= 0 && s < samples.length ? samples[s]! * hann[i]! : 0;
      im[i] = 0;
    }
    plan.transform(re, im);
    let power = 0;
    let low = 0;
    let weighted = 0;
    let rise = 0;
    for (let k = lowBin; k <= highBin; k++) {
      const p = re[k]! * re[k]! + im[k]! * im[k]!;
      power += p;
      weighted += p * k * binHz;
      if (k <= formantBin) low += p;
      const magnitude = Math.log1p(1000 * Math.sqrt(p));
      current[k] = magnitude;
      rise += Math.max(0, magnitude - previous[k]!);
    }
    level[h] = 10 * Math.log10(power + 1e-12);
    centroid[h] = power > 0 ? weighted / power : 0;
    firstFormantShare[h] = power > 0 ? low / power : 0;
    flux[h] = rise;
    [previous, current] = [current, previous];
  }

  // Per-clip normalisation: "loud" is this clip's 95th percentile; anything 45 dB under it is silence.
  const loud = percentile(level, 0.95);
  // What plays under the voice: the quietest the band gets around each moment. A band that goes on
  // through the singer's pauses sets this floor, so the mouth closes when only the band plays.
  const bed = slidingExtreme(envelope(level.map((value) => value - silenceDb(loud)), rate, 0.05, 0.05), Math.round(BED_WINDOW_SECONDS * rate), 'min');
  const floor = loud - OPEN_RANGE_DB;
  const silence = silenceDb(loud);
  const fluxScale = Math.max(1e-6, percentile(flux, 0.95));
  const target = new Float32Array(hops);
  const accent = new Float32Array(hops);
  const shape = new Float32Array(hops);
  for (let h = 0; h < hops; h++) {
    const voiced = level[h]! > silence;
    const overClip = (level[h]! - floor) / OPEN_RANGE_DB;
    const overBed = (level[h]! - silenceDb(loud) - bed[h]! - BED_MARGIN_DB) / BED_RANGE_DB;
    const loudness = voiced ? Math.min(1, Math.max(0, Math.min(overClip, overBed))) : 0;
    // Open vowels carry more of their energy in the first formant: they open a little wider.
    const openness = 0.8 + 0.4 * Math.min(1, firstFormantShare[h]!);
    target[h] = Math.min(1, Math.pow(loudness, 1.2) * openness);
    accent[h] = voiced ? Math.min(1, flux[h]! / fluxScale) * loudness : 0;
    // Rounded vowels (oo, oh) sit low: centroid 700 Hz → fully round, 1900 Hz and above → spread.
    shape[h] = voiced ? Math.min(1, Math.max(0, (1900 - centroid[h]!) / 1200)) : 0;
  }
  if (activity) {
    // The gate opens as fast as a mouth and closes as a mouth does: a phrase's last note is not cut.
    const gate = envelope(activity.active, rate, ATTACK_SECONDS, RELEASE_SECONDS);
    for (let h = 0; h < hops; h++) {
      target[h] = target[h]! * (gate[h] ?? 0);
      accent[h] = accent[h]! * (gate[h] ?? 0);
    }
  }
  const opened = envelope(target, rate, ATTACK_SECONDS, RELEASE_SECONDS);
  const rounded = envelope(shape, rate, 0.06, 0.1);
  const accented = envelope(accent, rate, 0.01, 0.12);
  const singing = envelope(target, rate, SINGING_ENVELOPE.attack, SINGING_ENVELOPE.release);

  return {
    fps,
    frames,
    open: withSustainWobble(perFrame(opened, rate, fps, frames), fps),
    round: perFrame(rounded, rate, fps, frames),
    accent: perFrame(accented, rate, fps, frames),
    singing: perFrame(singing, rate, fps, frames),
  };
}

function withSustainWobble(open: Float32Array, fps: number): Float32Array {
  for (let f = 0; f < open.length; f++) {
    const wobble = SUSTAIN_WOBBLE.amount * Math.sin((2 * Math.PI * SUSTAIN_WOBBLE.hertz * f) / fps);
    open[f] = Math.min(1, Math.max(0, open[f]! * (1 + wobble)));
  }
  return open;
}

/**
 * The same motion from a song's known mouth keyframes (template songs): openness and roundness
 * interpolated at each frame's middle, accents where the mouth opens for a new syllable.
 */
export function keyframedTrack(track: MouthTrack, fps: number, frames: number): VoiceTrack {
  const { keyframes } = track;
  const open = new Float32Array(frames);
  const round = new Float32Array(frames);
  let k = 0;
  for (let f = 0; f < frames; f++) {
    const t = (f + 0.5) / fps;
    while (k + 1 < keyframes.length && keyframes[k + 1]![0] <= t) k++;
    const [t0, open0, round0] = keyframes[k]!;
    const [t1, open1, round1] = keyframes[Math.min(k + 1, keyframes.length - 1)]!;
    const along = t1 > t0 ? Math.min(1, Math.max(0, (t - t0) / (t1 - t0))) : 0;
    open[f] = open0 + (open1 - open0) * along;
    round[f] = round0 + (round1 - round0) * along;
  }
  const rises = open.map((value, f) => (f === 0 ? value : Math.max(0, value - open[f - 1]!)));
  const scale = Math.max(1e-6, percentile(rises, 0.95));
  const accent = envelope(rises.map((rise) => Math.min(1, rise / scale)), fps, 0.01, 0.12);
  return { fps, frames, open: withSustainWobble(open, fps), round, accent, singing: envelope(open, fps, SINGING_ENVELOPE.attack, SINGING_ENVELOPE.release) };
}
