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
  /** The pixels of `rect` that a full lift moves (their places in it) and their shares of the lift (0-1). */
  movedX: Int16Array;
  movedY: Int16Array;
  weights: Float32Array;
  /** The lift at full height, in pixels. */
  lift: number;
}

/** The brow above `eye`: its rectangle and weights (BAND). */
export function browOf(eye: Eyelid, axes: FaceAxes): Brow {
  const { centre, rx, ry } = eye;
  const rect = boundsOf(axes, [-BAND.outer * rx - 1, BAND.outer * rx + 1], [-BAND.fadeTop * ry - 1, -BAND.eyeTop * ry + 1], centre);
  const lift = Math.min(LIFT.maxPixels, Math.max(LIFT.minPixels, LIFT.share * ry));
  const movedX: number[] = [];
  const movedY: number[] = [];
  const weights: number[] = [];
  for (let y = rect.top; y < rect.bottom; y++) {
    for (let x = rect.left; x < rect.right; x++) {
      const dx = x - centre[0];
      const dy = y - centre[1];
      const across = Math.abs(dx * axes.right[0] + dy * axes.right[1]) / rx;
      const up = -(dx * axes.down[0] + dy * axes.down[1]) / ry;
      const along = smoothstep(BAND.eyeTop, BAND.lower, up) * (1 - smoothstep(BAND.upper, BAND.fadeTop, up));
      const weight = along * (1 - smoothstep(BAND.inner, BAND.outer, across));
      // A pixel whose full lift rounds to nothing never moves.
      if (weight * lift < 0.5) continue;
      movedX.push(x - rect.left);
      movedY.push(y - rect.top);
      weights.push(weight);
    }
  }
  return { rect, movedX: Int16Array.from(movedX), movedY: Int16Array.from(movedY), weights: Float32Array.from(weights), lift };
}

/** Lifts `brow` by `amount` (0-1) of its full lift in `deformed`, by whole-pixel copies from `scratch` (the rectangle as it was). */
export function drawBrowLift(brow: Brow, amount: number, axes: FaceAxes, deformed: Buffer, scratch: Buffer): void {
  const { rect, movedX, movedY, weights } = brow;
  const { width, height } = axes;
  const rectWidth = rect.right - rect.left;
  const rectHeight = rect.bottom - rect.top;
  for (let y = rect.top; y < rect.bottom; y++) deformed.copy(scratch, (y - rect.top) * rectWidth * 3, (y * width + rect.left) * 3, (y * width + rect.right) * 3);
  const lift = brow.lift * amount;
  const [downX, downY] = axes.down;
  for (let i = 0; i < weights.length; i++) {
    const shift = lift * weights[i]!;
    // The pixel `shift` down the face shows here: the fur moves up.
    const stepX = Math.round(shift * downX);
    const stepY = Math.round(shift * downY);
    if (stepX === 0 && stepY === 0) continue;
    const x = movedX[i]!;
    const y = movedY[i]!;
    const o = ((rect.top + y) * width + rect.left + x) * 3;
    const sx = x + stepX;
    const sy = y + stepY;
    if (sx >= 0 && sx < rectWidth && sy >= 0 && sy < rectHeight) {
      const s = (sy * rectWidth + sx) * 3;
      deformed[o] = scratch[s]!;
      deformed[o + 1] = scratch[s + 1]!;
      deformed[o + 2] = scratch[s + 2]!;
    } else if (rect.left + sx >= 0 && rect.left + sx < width && rect.top + sy >= 0 && rect.top + sy < height) {
      const s = ((rect.top + sy) * width + rect.left + sx) * 3;
      deformed.copy(deformed, o, s, s + 3);
    }
  }
}
