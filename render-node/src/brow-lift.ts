import type { Eyelid } from './eyelids.ts';
import { boundsOf, type FaceAxes, type Rect } from './face-frame.ts';
import { smoothstep } from './photo-sampler.ts';

/**
 * The brow over one eye lifts on a high note (issue 36): the fur band above the eye slides up the face by whole pixels
 * (each pixel takes the photo's pixel `lift × weight` below it, rounded), so the fur is copied, never resampled. The
 * weight is 1 over the brow, from BAND.lower to BAND.upper eye heights above the eye's centre and across the eye's
 * width, and fades to 0 down to the top of the eye (which stays where it is: the skin between stretches), up the
 * forehead, and out over the eye's sides. The lift is LIFT.share of the eye's half height, at most LIFT.maxPixels: the
 * skin between eye and brow stretches at most 1.6× and the forehead above is pressed by at most 40%, so nothing
 * tears or folds.
 */
const BAND = { eyeTop: 1, lower: 2.6, upper: 3.1, fadeTop: 4.6, inner: 1, outer: 1.7 } as const;
const LIFT = { share: 0.4, minPixels: 1, maxPixels: 6 } as const;

export interface Brow {
  rect: Rect;
  /** Per pixel of `rect`, its share of the lift (0-1). */
  weights: Float32Array;
  /** The lift at full height, in pixels. */
  lift: number;
}

/** The brow above `eye`: its rectangle and weights (BAND). */
export function browOf(eye: Eyelid, axes: FaceAxes): Brow {
  const { centre, rx, ry } = eye;
  const rect = boundsOf(axes, [-BAND.outer * rx - 1, BAND.outer * rx + 1], [-BAND.fadeTop * ry - 1, -BAND.eyeTop * ry + 1], centre);
  const width = rect.right - rect.left;
  const weights = new Float32Array(width * (rect.bottom - rect.top));
  for (let y = rect.top; y < rect.bottom; y++) {
    for (let x = rect.left; x < rect.right; x++) {
      const dx = x - centre[0];
      const dy = y - centre[1];
      const across = Math.abs(dx * axes.right[0] + dy * axes.right[1]) / rx;
      const up = -(dx * axes.down[0] + dy * axes.down[1]) / ry;
      const along = smoothstep(BAND.eyeTop, BAND.lower, up) * (1 - smoothstep(BAND.upper, BAND.fadeTop, up));
      weights[(y - rect.top) * width + (x - rect.left)] = along * (1 - smoothstep(BAND.inner, BAND.outer, across));
    }
  }
  return { rect, weights, lift: Math.min(LIFT.maxPixels, Math.max(LIFT.minPixels, LIFT.share * ry)) };
}

/** Lifts `brow` by `amount` (0-1) of its full lift in `deformed`, by whole-pixel copies from `scratch` (the rectangle as it was). */
export function drawBrowLift(brow: Brow, amount: number, axes: FaceAxes, deformed: Buffer, scratch: Buffer): void {
  const { rect, weights } = brow;
  const { width, height } = axes;
  const rectWidth = rect.right - rect.left;
  for (let y = rect.top; y < rect.bottom; y++) deformed.copy(scratch, (y - rect.top) * rectWidth * 3, (y * width + rect.left) * 3, (y * width + rect.right) * 3);
  const lift = brow.lift * amount;
  for (let y = rect.top; y < rect.bottom; y++) {
    for (let x = rect.left; x < rect.right; x++) {
      const shift = lift * weights[(y - rect.top) * rectWidth + (x - rect.left)]!;
      // The pixel `shift` down the face shows here: the fur moves up.
      const sx = x + Math.round(shift * axes.down[0]);
      const sy = y + Math.round(shift * axes.down[1]);
      if (sx === x && sy === y) continue;
      const o = (y * width + x) * 3;
      if (sx >= rect.left && sx < rect.right && sy >= rect.top && sy < rect.bottom) {
        const s = ((sy - rect.top) * rectWidth + (sx - rect.left)) * 3;
        deformed[o] = scratch[s]!;
        deformed[o + 1] = scratch[s + 1]!;
        deformed[o + 2] = scratch[s + 2]!;
      } else if (sx >= 0 && sx < width && sy >= 0 && sy < height) {
        deformed.copy(deformed, o, (sy * width + sx) * 3, (sy * width + sx) * 3 + 3);
      }
    }
  }
}
