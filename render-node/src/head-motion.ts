import { boundsOf, union, type FaceAxes, type Rect } from './face-frame.ts';
import type { Point } from './pet-face.ts';
import { smoothstep } from './photo-sampler.ts';

const MOTION_LEVELS = 64;
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

  /** `moving`: the rectangles of the parts drawn on top of the head (jaw, eyes), which move with it. */
  constructor({ axes, eyeMid, length, eyeDistance, moving }: { axes: FaceAxes; eyeMid: Point; length: number; eyeDistance: number; moving: Rect[] }) {
    this.width = axes.width;
    this.height = axes.height;
    const { right: across, down } = axes;
    const centre: Point = [eyeMid[0] + down[0] * 0.2 * length, eyeMid[1] + down[1] * 0.2 * length];
    const ry = 1.05 * length;
    const rx = Math.max(0.9 * length, 0.85 * eyeDistance + 0.3 * length);
    const fade = 1.1;
    const fadePixels = Math.max(2, (fade - 1) * Math.min(rx, ry));
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

  /** Writes the head's rectangle: the deformed head, each pixel moved by whole pixels (its weight times the offset). */
  write(deformed: Buffer, headX: number, headY: number, out: Buffer): void {
    const { left, top, right, bottom } = this.rect;
    const { level: motionLevel, runs: motionRuns } = this;
    const offsetX = new Int32Array(MOTION_LEVELS + 1);
    const offsetY = new Int32Array(MOTION_LEVELS + 1);
    // The weights at which a pixel's whole-pixel offset steps: few, since the head moves a few pixels.
    const steps: number[] = [];
    for (let level = 0; level <= MOTION_LEVELS; level++) {
      offsetX[level] = Math.round((level / MOTION_LEVELS) * headX);
      offsetY[level] = Math.round((level / MOTION_LEVELS) * headY);
      if (level > 0 && (offsetX[level] !== offsetX[level - 1] || offsetY[level] !== offsetY[level - 1])) steps.push(level);
    }
    const rectWidth = right - left;
    for (let y = top; y < bottom; y++) {
      const runs = motionRuns[y - top]!;
      const row = (y - top) * rectWidth - left;
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
