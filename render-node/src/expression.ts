import { slidingExtreme } from './signal.ts';

/**
 * The face performing beyond the mouth (issue 36): on a long loud note the eyes narrow, as a singer's do. A note
 * counts as long and loud while the mouth has stayed open at least `open` for the last `holdSeconds`; the lids then
 * come down to `depth` of the eye (a blink's 1 is shut) over `easeSeconds`, and lift as the note ends. Off in silence
 * and on short notes; the mouth is never touched, so its sync stays as it was.
 */
const NARROW = { open: 0.55, holdSeconds: 0.4, depth: 0.35, easeSeconds: 0.2 } as const;

/** Per frame, how far the lids come down for the voice's held notes (0 open … NARROW.depth), from the mouth's opening per frame. */
export function eyeNarrowing(open: Float32Array, fps: number): Float32Array {
  const frames = open.length;
  const hold = Math.max(1, Math.round(NARROW.holdSeconds * fps));
  // The least opening over the last `hold` frames (a window centred `hold` / 2 back, so shifted to end here).
  const least = slidingExtreme(open, hold, 'min');
  const half = Math.floor(hold / 2);
  const step = 1 / Math.max(1, NARROW.easeSeconds * fps);
  const out = new Float32Array(frames);
  let level = 0;
  for (let f = 0; f < frames; f++) {
    const held = f >= hold - 1 && least[f - half]! >= NARROW.open;
    level = held ? Math.min(1, level + step) : Math.max(0, level - step);
    out[f] = NARROW.depth * level * level * (3 - 2 * level);
  }
  return out;
}
