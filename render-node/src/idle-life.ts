import type { RigPose } from './face-rig.ts';
import type { VoiceTrack } from './voice-driver.ts';

export type IdlePose = Pick<RigPose, 'blink' | 'headX' | 'headY'>;

/**
 * Life beyond the mouth, in output pixels and seconds. The head nods on sung syllables and sways
 * with phrases, both scaled by how much the pet is singing, so it settles in pauses. Amplitudes are a
 * share of the face length, capped so a close-up never wobbles. There is no breathing: the head moves
 * by whole pixels, so a breath under half a pixel never showed and a larger one was a one-pixel jerk in
 * every pause (it hid a small mouth's motion from the eye: docs/benchmarks.md).
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
} as const;

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

/**
 * Blinks and head motion for each frame of `voice`; all zero when `enabled` is false. Blinks come
 * at irregular intervals within `blinkEvery` seconds, or never when it is null.
 */
export function idlePoses(voice: VoiceTrack, faceLengthPixels: number, enabled: boolean, blinkEvery: readonly [number, number] | null): IdlePose[] {
  const { fps, frames } = voice;
  if (!enabled) return Array.from({ length: frames }, () => ({ blink: 0, headX: 0, headY: 0 }));
  const amplitude = Math.min(IDLE_LIFE.headMaxPixels, Math.max(IDLE_LIFE.headMinPixels, IDLE_LIFE.headShare * faceLengthPixels));
  const next = random(frames * 7919 + Math.round(faceLengthPixels));
  const blinkStarts: number[] = [];
  const duration = frames / fps;
  for (let t = IDLE_LIFE.firstBlinkSeconds; blinkEvery && t < duration; ) {
    blinkStarts.push(t);
    const [shortest, longest] = blinkEvery;
    t += shortest + (longest - shortest) * next();
  }
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
