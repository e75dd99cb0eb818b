import { browLift, eyeNarrowing, phrasesOf } from './expression.ts';
import { TURN_REACH } from './head-motion.ts';
import type { RigPose } from './face-rig.ts';
import type { IdlePose } from './idle-life.ts';
import { smoothstep } from './photo-sampler.ts';
import type { PitchTrack } from './pitch-track.ts';
import type { VoiceTrack } from './voice-driver.ts';

/**
 * The head performing with the phrases (issue 36), on top of idle life's nods and sways (idle-life.ts):
 * - a lean into each phrase: the head turns by up to TILT.degrees over TILT.leanSeconds as the phrase starts, to one
 *   side and then the other phrase by phrase, and comes back upright over the phrase: by its end or TILT.backSeconds
 *   after its start, whichever is sooner, taking at least TILT.minBackSeconds. The turn reaches half a face length
 *   from the head's centre (head-motion.ts's TURN_REACH: beyond, the head moves as that rim does) and moves no pixel
 *   more than TILT.edgePixels (whole-pixel shears), small enough not to tear;
 * - a breath in each pause of 0.5 s or more between two phrases: the top of the head (the ears' band, head-motion.ts)
 *   rises by BREATH (a share of the face length, 1-2 px) and settles, one smooth rise and fall over the pause, never on
 *   a sung frame (BREATH.marginSeconds clear of the phrases on either side). The muzzle stays: a whole-pixel rise of
 *   the whole head in the pauses lowered the pug's mouth-vs-voice r (species-singing.test.ts) from 0.67 to 0.59;
 * - ears that trail: the top of the head takes the head's pose EAR_LAG_SECONDS earlier.
 */
const TILT = { degrees: 1.2, edgePixels: 3, leanSeconds: 0.35, backSeconds: 2.5, minBackSeconds: 0.5 } as const;
const BREATH = { share: 0.008, minPixels: 1, maxPixels: 2, marginSeconds: 0.08 } as const;
const EAR_LAG_SECONDS = 0.08;

export type PerformedPose = Omit<RigPose, 'open' | 'round'>;

/** Per frame, the lean (radians, clockwise on screen) of the head into each phrase. */
export function headTilt(phrases: Array<[number, number]>, fps: number, frames: number, faceLengthPixels: number): Float32Array {
  const angle = Math.min((TILT.degrees * Math.PI) / 180, TILT.edgePixels / Math.max(1, TURN_REACH * faceLengthPixels));
  const out = new Float32Array(frames);
  for (const [index, [start, end]] of phrases.entries()) {
    const side = index % 2 === 0 ? 1 : -1;
    const leaned = start + TILT.leanSeconds * fps;
    const back = Math.max(leaned + TILT.minBackSeconds * fps, Math.min(end, start + TILT.backSeconds * fps));
    for (let f = start; f < Math.min(frames, Math.ceil(back)); f++) {
      const lean = f < leaned ? smoothstep(start, leaned, f) : 1 - smoothstep(leaned, back, f);
      out[f] = side * angle * lean;
    }
  }
  return out;
}

/** Per frame, how far (px, negative: up) the head rises for a breath in the pauses between phrases. */
export function breaths(phrases: Array<[number, number]>, fps: number, frames: number, faceLengthPixels: number): Float32Array {
  const height = Math.min(BREATH.maxPixels, Math.max(BREATH.minPixels, BREATH.share * faceLengthPixels));
  const margin = Math.ceil(BREATH.marginSeconds * fps);
  const out = new Float32Array(frames);
  for (let p = 0; p + 1 < phrases.length; p++) {
    const from = phrases[p]![1] + margin;
    const to = phrases[p + 1]![0] - margin;
    if (to - from < 2) continue;
    for (let f = from; f < to; f++) out[f] = -height * Math.sin((Math.PI * (f - from + 0.5)) / (to - from)) ** 2;
  }
  return out;
}

/** `values` as they were `seconds` earlier (linear between frames; the first value before the start). */
function lagged(values: ArrayLike<number>, fps: number, seconds: number): Float32Array {
  const lag = seconds * fps;
  return Float32Array.from({ length: values.length }, (_, f) => {
    const t = Math.max(0, f - lag);
    const k = Math.floor(t);
    const next = Math.min(values.length - 1, k + 1);
    return values[k]! + (values[next]! - values[k]!) * (t - k);
  });
}

/**
 * Everything the face does beyond the mouth, per frame: idle life (`life`: blinks, nods, sways), the eyes narrowing on
 * long loud notes and the brows lifting on high ones (only where the lids are drawn: `lids`; the brows need `pitch`),
 * the lean into phrases, the breath between them and the ears' lag. All of it off when `enabled` is false.
 */
export function performedPoses(options: { voice: VoiceTrack; life: IdlePose[]; pitch?: PitchTrack; faceLengthPixels: number; lids: boolean; enabled: boolean }): PerformedPose[] {
  const { voice, life, pitch, faceLengthPixels, lids, enabled } = options;
  const { fps, frames } = voice;
  if (!enabled) return life.map((pose) => ({ ...pose }));
  const phrases = phrasesOf(voice.open, fps);
  const narrowing = lids ? eyeNarrowing(voice.open, fps) : undefined;
  const brow = lids && pitch ? browLift(pitch, phrases, fps, frames) : undefined;
  const tilt = headTilt(phrases, fps, frames, faceLengthPixels);
  const breath = breaths(phrases, fps, frames, faceLengthPixels);
  const earX = lagged(life.map((pose) => pose.headX), fps, EAR_LAG_SECONDS);
  // The breath lifts the top of the head (the ears' band), not the muzzle: see BREATH.
  const earY = lagged(life.map((pose) => pose.headY), fps, EAR_LAG_SECONDS).map((y, f) => y + breath[f]!);
  const earTilt = lagged(tilt, fps, EAR_LAG_SECONDS);
  return life.map((pose, f) => ({
    blink: Math.max(pose.blink, narrowing?.[f] ?? 0),
    headX: pose.headX,
    headY: pose.headY,
    brow: brow?.[f] ?? 0,
    tilt: tilt[f]!,
    earX: earX[f]!,
    earY: earY[f]!,
    earTilt: earTilt[f]!,
  }));
}
