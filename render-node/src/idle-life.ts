import type { Beats } from './beat-tracker.ts';
import type { RigPose } from './face-rig.ts';
import type { VoiceTrack } from './voice-driver.ts';

export type IdlePose = Pick<RigPose, 'blink' | 'headX' | 'headY'>;

/**
 * Life beyond the mouth, in output pixels and seconds. The head nods on sung syllables and sways
 * with phrases, both scaled by how much the pet is singing, so it settles in pauses. Amplitudes are a
 * share of the face length, capped so a close-up never wobbles. There is no idle breathing: the head moves
 * by whole pixels, so a breath under half a pixel never showed and a larger one was a one-pixel jerk in
 * every pause (it hid a small mouth's motion from the eye: docs/benchmarks.md). The one breath is a slow rise
 * between two phrases (head-performance.ts).
 */
const IDLE_LIFE = {
  headShare: 0.012,
  headMinPixels: 0,
  headMaxPixels: 3,
  swayPeriodSeconds: 3.9,
  bobPeriodSeconds: 2.3,
  /** A blink takes a quarter of a second; how often depends on the species (species-rig.ts). */
  firstBlinkSeconds: 1.1,
  blinkClose: 0.08,
  blinkHold: 0.04,
  blinkOpen: 0.12,
  /**
   * Blinks go where the mouth is nearly shut for the whole blink (open ≤ quietOpen: pauses and consonants), never
   * over a sung vowel: moved up to `earlier` s before or `later` s after where they would fall, or left out.
   */
  blink: { quietOpen: 0.25, earlier: 0.6, later: 1.5 },
} as const;

/**
 * The head with a band (a song whose accompaniment has beats): a nod on every beat, at its lowest on the beat (a
 * bell over `nodWidth` of a beat either side), `downbeat` deep on the bar's first beat and `beat` on the others;
 * a sway from side to side over a bar (`sway` of the amplitude). For `phraseSeconds` after the voice comes back
 * (a phrase starts) both grow, by up to `phraseLift`. The band keeps the head moving through instrumental passages,
 * at `instrumental` of the size it has while the pet sings (the phrase envelope, `VoiceTrack.singing`, blends the two).
 */
const GROOVE = { nodWidth: 0.16, downbeat: 1, beat: 0.6, sway: 0.5, phraseLift: 0.7, phraseSeconds: 1.2, instrumental: 0.6 } as const;

/** What drives the head when a band plays: its beats and where the voice's phrases start (seconds). */
export interface Rhythm {
  beats: Beats;
  phraseStarts: readonly number[];
}

/** A small deterministic generator: the same clip always renders the same video. */
function random(seed: number): () => number {
  let state = seed >>> 0 || 1;
  return () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 4294967296;
  };
}

function blinkAmount(sinceStart: number): number {
  const { blinkClose, blinkHold, blinkOpen } = IDLE_LIFE;
  if (sinceStart < 0) return 0;
  if (sinceStart < blinkClose) return sinceStart / blinkClose;
  if (sinceStart < blinkClose + blinkHold) return 1;
  const opening = sinceStart - blinkClose - blinkHold;
  return opening < blinkOpen ? 1 - opening / blinkOpen : 0;
}

/** A blink time near `t` where the mouth stays nearly shut for the whole blink, or null (module comment, `blink`). */
function quietMoment(t: number, open: Float32Array, fps: number): number | null {
  const { quietOpen, earlier, later } = IDLE_LIFE.blink;
  const length = Math.ceil((IDLE_LIFE.blinkClose + IDLE_LIFE.blinkHold + IDLE_LIFE.blinkOpen) * fps);
  const quiet = (start: number) => {
    for (let f = start; f < start + length && f < open.length; f++) if (open[f]! > quietOpen) return false;
    return true;
  };
  const at = Math.round(t * fps);
  // Nearest first: the frame itself, then one later, one earlier, two later...
  for (let step = 0; step <= Math.ceil(later * fps); step++) {
    if (at + step < open.length && quiet(at + step)) return (at + step) / fps;
    if (step > 0 && step <= earlier * fps && at - step >= 0 && quiet(at - step)) return (at - step) / fps;
  }
  return null;
}

/** Time `t` as a count of beats from the first downbeat (fractional between beats); `k` is the last beat at or before `t`, or 0. */
function beatCount(beats: Beats, t: number, k: number): number {
  const { times } = beats;
  const first = Math.max(0, times.indexOf(beats.downbeats[0] ?? times[0]!));
  const span = k + 1 < times.length ? times[k + 1]! - times[k]! : 60 / beats.tempoBpm;
  return k - first + (t - times[k]!) / span;
}

/** The head's offsets (in amplitudes) with a band, frame by frame (GROOVE). */
function groove(rhythm: Rhythm, singing: Float32Array, fps: number, frames: number): { x: Float32Array; y: Float32Array } {
  const { beats, phraseStarts } = rhythm;
  const { times } = beats;
  const downbeats = new Set(beats.downbeats);
  const period = 60 / beats.tempoBpm;
  const width = GROOVE.nodWidth * period;
  const x = new Float32Array(frames);
  const y = new Float32Array(frames);
  let k = 0;
  let phrase = 0;
  for (let f = 0; f < frames; f++) {
    const t = f / fps;
    while (k + 1 < times.length && times[k + 1]! <= t) k++;
    while (phrase + 1 < phraseStarts.length && phraseStarts[phrase + 1]! <= t) phrase++;
    const since = phraseStarts.length && phraseStarts[phrase]! <= t ? t - phraseStarts[phrase]! : Infinity;
    const engaged = GROOVE.instrumental + (1 - GROOVE.instrumental) * Math.min(1, singing[f]!);
    const lift = engaged * (1 + GROOVE.phraseLift * Math.exp(-since / GROOVE.phraseSeconds));
    let nod = 0;
    for (let j = Math.max(0, k - 1); j <= Math.min(times.length - 1, k + 2); j++) {
      const weight = downbeats.has(times[j]!) ? GROOVE.downbeat : GROOVE.beat;
      nod += weight * Math.exp(-0.5 * ((t - times[j]!) / width) ** 2);
    }
    y[f] = nod * lift;
    x[f] = GROOVE.sway * lift * Math.sin((Math.PI * beatCount(beats, t, k)) / 2);
  }
  return { x, y };
}

/**
 * Blinks and head motion for each frame of `voice`; all zero when `enabled` is false. Blinks come
 * at irregular intervals within `blinkEvery` seconds (never over a sung vowel), or never when it is null.
 * With a `rhythm` (a band with beats) the head keeps time (GROOVE); without one it nods on sung syllables
 * and sways with phrases, settling in pauses.
 */
export function idlePoses(voice: VoiceTrack, faceLengthPixels: number, enabled: boolean, blinkEvery: readonly [number, number] | null, rhythm?: Rhythm): IdlePose[] {
  const { fps, frames } = voice;
  if (!enabled) return Array.from({ length: frames }, () => ({ blink: 0, headX: 0, headY: 0 }));
  const amplitude = Math.min(IDLE_LIFE.headMaxPixels, Math.max(IDLE_LIFE.headMinPixels, IDLE_LIFE.headShare * faceLengthPixels));
  const next = random(frames * 7919 + Math.round(faceLengthPixels));
  const blinkStarts: number[] = [];
  const duration = frames / fps;
  for (let t = IDLE_LIFE.firstBlinkSeconds; blinkEvery && t < duration; ) {
    const at = quietMoment(t, voice.open, fps);
    if (at !== null) blinkStarts.push(at);
    const [shortest, longest] = blinkEvery;
    t = Math.max(t, at ?? t) + shortest + (longest - shortest) * next();
  }
  const band = rhythm ? groove(rhythm, voice.singing, fps, frames) : undefined;
  // The nod: a soft dip that follows syllable accents (a critically damped response, not a twitch).
  const nod = new Float32Array(frames);
  let position = 0;
  let velocity = 0;
  const stiffness = (2 * Math.PI * 2.2) ** 2;
  const damping = 2 * Math.sqrt(stiffness);
  const dt = 1 / fps;
  for (let f = 0; f < frames; f++) {
    const force = stiffness * (voice.accent[f]! - position) - damping * velocity;
    velocity += force * dt;
    position += velocity * dt;
    nod[f] = position;
  }
  let blinkIndex = 0;
  return Array.from({ length: frames }, (_, f) => {
    const t = f / fps;
    while (blinkIndex + 1 < blinkStarts.length && t >= blinkStarts[blinkIndex + 1]!) blinkIndex++;
    const blink = blinkStarts.length ? blinkAmount(t - blinkStarts[blinkIndex]!) : 0;
    if (band) return { blink, headX: amplitude * band.x[f]!, headY: amplitude * band.y[f]! };
    const singing = voice.singing[f]!;
    const sway = Math.sin((2 * Math.PI * t) / IDLE_LIFE.swayPeriodSeconds);
    const bob = Math.sin((2 * Math.PI * t) / IDLE_LIFE.bobPeriodSeconds + 1);
    return {
      blink,
      headX: amplitude * singing * sway,
      headY: amplitude * (0.7 * nod[f]! + 0.35 * singing * (0.5 + 0.5 * bob)),
    };
  });
}
