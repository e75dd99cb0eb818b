import { boundsOf, union, type FaceAxes, type Rect } from './face-frame.ts';
import type { Point } from './pet-face.ts';
import { smoothstep } from './photo-sampler.ts';

const MOTION_LEVELS = 64;
/**
 * The ears' band: the top of the head's ellipse, from EARS.from of its half height above the centre (the brows) up to
 * EARS.full (the ears) and beyond, follows the head with the ears' own (lagged) pose: per row of the image.
 */
const EARS = { from: 0.35, full: 0.75, steps: 8 } as const;
/**
 * A turn reaches this far from the head's centre (in face lengths: past the eyes); farther out, along each axis, it
 * eases back to nothing at the head's outer edge: the face turns, the head's edge (and a frame corner a large head
 * reaches) stays.
 */
export const TURN_REACH = 0.5;

/** How far a turn carries a point `t` from the centre along one axis: `t` out to `reach`, back to 0 at `end`. */
function turnProfile(t: number, reach: number, end: number): number {
  const away = Math.abs(t);
  if (away <= reach) return t;
  return Math.sign(t) * reach * Math.max(0, (end - away) / Math.max(1, end - reach));
}

/**
 * Where the head is in one frame, in output pixels: `x`, `y` its offset; `tilt` a small turn (radians, clockwise on
 * screen) about the head's centre; `ears` the pose the top of the head takes (the head's a moment ago: they trail).
 */
export interface HeadPose {
  x: number;
  y: number;
  tilt: number;
  ears: { x: number; y: number; tilt: number };
}
/** Runs of pixels whose weights rise (or fall) along the row: the band around the head. */
const RISING = -1;
const FALLING = -2;

/**
 * Head motion by whole pixels, so fur is never resampled for it and stays as sharp as the photo: the
 * head (an ellipse from above the ears to below the chin) moves by the offset, fading to still over
 * a tenth of its size around it. The parts drawn on it (the jaw or beak, the eyelids) move with it as
 * one piece even where they reach past the ellipse (a bird's beak in profile), fading over the same band
 * around their rectangles: a nodding head never bends its mouth.
 */
export class HeadMotion {
  /** Covers the head and everything drawn on it (`moving`). */
  readonly rect: Rect;
  // A weight per pixel of `rect` (MOTION_LEVELS on the head, fading to 0 around it), and per row the runs
  // of pixels (start, end, kind): one weight for all (kind = that level), or weights that only rise
  // (RISING) or only fall (FALLING) along the run.
  private readonly level: Uint8Array;
  private readonly runs: Int32Array[] = [];
  private readonly width: number;
  private readonly height: number;
  private readonly centre: Point;
  /** TURN_REACH in pixels, and where the turn ends along each axis (the head's outer edge). */
  private readonly reach: number;
  private readonly turnEnd: Point;
  /** Per row of `rect`: how much the row takes the ears' pose rather than the head's (0-1). */
  private readonly earWeight: Float32Array;

  /** `moving`: the rectangles of the parts drawn on top of the head (jaw, eyes), which move with it. */
  constructor({ axes, eyeMid, length, eyeDistance, moving }: { axes: FaceAxes; eyeMid: Point; length: number; eyeDistance: number; moving: Rect[] }) {
    this.width = axes.width;
    this.height = axes.height;
    const { right: across, down } = axes;
    const centre: Point = [eyeMid[0] + down[0] * 0.2 * length, eyeMid[1] + down[1] * 0.2 * length];
    this.centre = centre;
    this.reach = TURN_REACH * length;
    const ry = 1.05 * length;
    const rx = Math.max(0.9 * length, 0.85 * eyeDistance + 0.3 * length);
    const fade = 1.1;
    const fadePixels = Math.max(2, (fade - 1) * Math.min(rx, ry));
    this.turnEnd = [Math.max(this.reach + 1, fade * rx), Math.max(this.reach + 1, fade * ry)];
    const carried = moving.map((rect) => ({
      left: Math.max(0, Math.floor(rect.left - fadePixels)),
      top: Math.max(0, Math.floor(rect.top - fadePixels)),
      right: Math.min(axes.width, Math.ceil(rect.right + fadePixels)),
      bottom: Math.min(axes.height, Math.ceil(rect.bottom + fadePixels)),
    }));
    this.rect = union([boundsOf(axes, [-rx * fade, rx * fade], [-ry * fade, ry * fade], centre), ...carried]);
    const { left, top, right, bottom } = this.rect;
    const rectWidth = right - left;
    this.level = new Uint8Array(rectWidth * (bottom - top));
    // Rows above the centre along the face's axis (a head tilted past upright is approximated by its rows).
    // In EARS.steps steps, so that runs of rows share one offset (and one table of offsets by weight).
    this.earWeight = Float32Array.from({ length: bottom - top }, (_, i) => Math.round(EARS.steps * smoothstep(EARS.from, EARS.full, (-(top + i - centre[1]) * down[1]) / ry)) / EARS.steps);
    for (let y = top; y < bottom; y++) {
      const runs: number[] = [];
      for (let x = left; x < right; x++) {
        const u = ((x - centre[0]) * across[0] + (y - centre[1]) * across[1]) / rx;
        const v = ((x - centre[0]) * down[0] + (y - centre[1]) * down[1]) / ry;
        let weight = 1 - smoothstep(1, fade, Math.hypot(u, v));
        for (const part of moving) {
          const outside = Math.hypot(Math.max(part.left - x, 0, x + 1 - part.right), Math.max(part.top - y, 0, y + 1 - part.bottom));
          weight = Math.max(weight, 1 - smoothstep(0, fadePixels, outside));
        }
        const level = Math.round(MOTION_LEVELS * weight);
        this.level[(y - top) * rectWidth + (x - left)] = level;
        const previous = x > left ? this.level[(y - top) * rectWidth + (x - left - 1)]! : level;
        const last = runs.length - 3;
        const pure = level === 0 || level === MOTION_LEVELS;
        if (pure && last >= 0 && runs[last + 2] === level) runs[last + 1] = x + 1;
        else if (pure) runs.push(x, x + 1, level);
        else if (last >= 0 && runs[last + 2]! < 0 && level === previous) runs[last + 1] = x + 1;
        else if (last >= 0 && runs[last + 2] === (level > previous ? RISING : FALLING)) runs[last + 1] = x + 1;
        else if (last >= 0 && runs[last + 2]! < 0 && runs[last + 1]! - runs[last]! === 1) {
          // A one-pixel run takes the direction its second pixel gives it.
          runs[last + 1] = x + 1;
          runs[last + 2] = level > previous ? RISING : FALLING;
        } else runs.push(x, x + 1, RISING);
      }
      this.runs.push(Int32Array.from(runs));
    }
  }

  /** `still` (the photo as shown) everywhere outside the head's rectangle, which write() fills. */
  writeStill(source: Buffer, out: Buffer): void {
    const { left, top, right, bottom } = this.rect;
    const { width } = this;
    out.set(source.subarray(0, top * width * 3), 0);
    out.set(source.subarray(bottom * width * 3), bottom * width * 3);
    for (let y = top; y < bottom; y++) {
      const row = y * width * 3;
      if (left > 0) out.set(source.subarray(row, row + left * 3), row);
      if (right < width) out.set(source.subarray(row + right * 3, row + width * 3), row + right * 3);
    }
  }

  /**
   * Writes the head's rectangle: the deformed head, each pixel moved by whole pixels (its weight times its motion).
   * A pixel's motion is its row's offset (the head's, blended towards the ears' up the head) and the tilt's turn about
   * the centre, taken as two shears: a shift along the row by the row's height, and down the column by the pixel's
   * place along the row (each out to TURN_REACH). The turn is a degree or so, so neighbouring pixels' offsets differ by
   * under a pixel: no holes.
   */
  write(deformed: Buffer, pose: HeadPose, out: Buffer): void {
    const { top, bottom } = this.rect;
    const offsetX = new Int32Array(MOTION_LEVELS + 1);
    const offsetY = new Int32Array(MOTION_LEVELS + 1);
    const steps: number[] = [];
    let lastX = Number.NaN;
    let lastY = Number.NaN;
    for (let y = top; y < bottom; y++) {
      const ear = this.earWeight[y - top]!;
      const tilt = pose.tilt + ear * (pose.ears.tilt - pose.tilt);
      const rowX = pose.x + ear * (pose.ears.x - pose.x) - tilt * turnProfile(y - this.centre[1], this.reach, this.turnEnd[1]);
      const rowY = pose.y + ear * (pose.ears.y - pose.y);
      if (Math.abs(tilt) * this.reach >= 0.5) {
        this.writeTurnedRow(deformed, out, y, rowX, rowY, tilt);
        continue;
      }
      if (rowX !== lastX || rowY !== lastY) {
        // The weights at which a pixel's whole-pixel offset steps: few, since the head moves a few pixels.
        steps.length = 0;
        for (let level = 0; level <= MOTION_LEVELS; level++) {
          offsetX[level] = Math.round((level / MOTION_LEVELS) * rowX);
          offsetY[level] = Math.round((level / MOTION_LEVELS) * rowY);
          if (level > 0 && (offsetX[level] !== offsetX[level - 1] || offsetY[level] !== offsetY[level - 1])) steps.push(level);
        }
        [lastX, lastY] = [rowX, rowY];
      }
      this.writeRow(deformed, out, y, offsetX, offsetY, steps);
    }
  }

  /** One row whose offsets depend on the weight alone (no turn): runs of one offset copied whole. */
  private writeRow(deformed: Buffer, out: Buffer, y: number, offsetX: Int32Array, offsetY: Int32Array, steps: number[]): void {
    const { left, top, right } = this.rect;
    const motionLevel = this.level;
    const runs = this.runs[y - top]!;
    const row = (y - top) * (right - left) - left;
    for (let r = 0; r < runs.length; r += 3) {
      const start = runs[r]!;
      const end = runs[r + 1]!;
      const kind = runs[r + 2]!;
      if (kind >= 0) {
        this.copyShifted(deformed, out, y, start, end, offsetX[kind]!, offsetY[kind]!);
        continue;
      }
      // Along a rising (falling) run each step weight is crossed once: find where by bisection and
      // copy the stretches between crossings, each with one offset.
      const rising = kind === RISING;
      let from = start;
      for (let i = 0; i < steps.length; i++) {
        const step = steps[rising ? i : steps.length - 1 - i]!;
        let low = from;
        let high = end;
        while (low < high) {
          const middle = (low + high) >> 1;
          const level = motionLevel[row + middle]!;
          if (rising ? level >= step : level < step) high = middle;
          else low = middle + 1;
        }
        if (low > from) {
          const level = motionLevel[row + from]!;
          this.copyShifted(deformed, out, y, from, low, offsetX[level]!, offsetY[level]!);
          from = low;
        }
      }
      if (from < end) {
        const level = motionLevel[row + from]!;
        this.copyShifted(deformed, out, y, from, end, offsetX[level]!, offsetY[level]!);
      }
    }
  }

  /**
   * One row of a turned head. Along a run of one weight the offset down the column grows linearly with x, so it steps
   * at points found directly and the stretches between are copied whole; the band around the head (weights that
   * rise or fall) goes pixel by pixel, in runs of one offset.
   */
  private writeTurnedRow(deformed: Buffer, out: Buffer, y: number, rowX: number, rowY: number, tilt: number): void {
    const { left, top, right } = this.rect;
    const runs = this.runs[y - top]!;
    const row = (y - top) * (right - left) - left;
    const { reach } = this;
    const end_ = this.turnEnd[0];
    const centreX = this.centre[0];
    for (let r = 0; r < runs.length; r += 3) {
      const start = runs[r]!;
      const end = runs[r + 1]!;
      const kind = runs[r + 2]!;
      if (kind === 0) {
        this.copyShifted(deformed, out, y, start, end, 0, 0);
        continue;
      }
      if (kind > 0) {
        const weight = kind / MOTION_LEVELS;
        const dx = Math.round(weight * rowX);
        // The turn's profile is linear between these points: copy each stretch by where its offset steps.
        const breaks = [start, centreX - end_, centreX - reach, centreX + reach, centreX + end_, end];
        for (let b = 0; b + 1 < breaks.length; b++) {
          const from = Math.min(end, Math.max(start, b === 0 ? start : Math.ceil(breaks[b]!)));
          const to = Math.min(end, Math.max(from, b + 2 === breaks.length ? end : Math.ceil(breaks[b + 1]!)));
          this.copyLinear(deformed, out, y, from, to, dx, (x) => weight * (rowY + tilt * turnProfile(x - centreX, reach, end_)));
        }
        continue;
      }
      let from = start;
      let runX = 0;
      let runY = 0;
      for (let x = start; x < end; x++) {
        const weight = this.level[row + x]! / MOTION_LEVELS;
        const dx = Math.round(weight * rowX);
        const dy = Math.round(weight * (rowY + tilt * turnProfile(x - centreX, reach, end_)));
        if (x === start) [runX, runY] = [dx, dy];
        else if (dx !== runX || dy !== runY) {
          this.copyShifted(deformed, out, y, from, x, runX, runY);
          [from, runX, runY] = [x, dx, dy];
        }
      }
      this.copyShifted(deformed, out, y, from, end, runX, runY);
    }
  }

  /** out[y][from, to) = deformed shifted by dx and by round(offsetY(x)) down, where offsetY is linear over the stretch. */
  private copyLinear(deformed: Buffer, out: Buffer, y: number, from: number, to: number, dx: number, offsetY: (x: number) => number): void {
    if (to <= from) return;
    const slope = to - from > 1 ? (offsetY(to - 1) - offsetY(from)) / (to - 1 - from) : 0;
    for (let x = from; x < to; ) {
      const value = offsetY(x);
      const dy = Math.round(value);
      // Where the offset rounds to the next value.
      const edge = slope === 0 ? to : x + (dy + (slope > 0 ? 0.5 : -0.5) - value) / slope;
      const next = Math.min(to, Math.max(x + 1, slope > 0 ? Math.ceil(edge) : Math.floor(edge) + 1));
      this.copyShifted(deformed, out, y, x, next, dx, dy);
      x = next;
    }
  }

  /** out[y][start, end) = deformed shifted by (dx, dy), clamped at the frame's edges. */
  private copyShifted(deformed: Buffer, out: Buffer, y: number, start: number, end: number, dx: number, dy: number): void {
    const { width, height } = this;
    const sy = y - dy;
    const sx = start - dx;
    if (sy >= 0 && sy < height && sx >= 0 && sx + (end - start) <= width) {
      const from = (sy * width + sx) * 3;
      const to = (y * width + start) * 3;
      const bytes = (end - start) * 3;
      // Short runs byte by byte: a subarray view costs more than copying a few pixels.
      if (bytes >= 96) out.set(deformed.subarray(from, from + bytes), to);
      else for (let i = 0; i < bytes; i++) out[to + i] = deformed[from + i]!;
      return;
    }
    const row = Math.min(height - 1, Math.max(0, sy)) * width;
    for (let x = start; x < end; x++) {
      const source = (row + Math.min(width - 1, Math.max(0, x - dx))) * 3;
      const target = (y * width + x) * 3;
      out[target] = deformed[source]!;
      out[target + 1] = deformed[source + 1]!;
      out[target + 2] = deformed[source + 2]!;
    }
  }
}
