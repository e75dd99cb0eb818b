import type { CropBox } from './face-crop.ts';
import type { RgbImage } from './image-decoder.ts';

/** An RGBA overlay drawn at a fixed place after the idle motion (it must not sway with the pet). */
export interface Overlay {
  left: number;
  top: number;
  width: number;
  height: number;
  rgba: Buffer;
}

/**
 * Idle motion, so the whole picture lives and not only the mouth: a breath (vertical stretch
 * anchored at the bottom edge, as a chest rises) and a slow head sway (a shear that moves the top
 * and leaves the bottom still). Periods are not multiples of each other, so the motion never
 * looks like a loop within a 30 s clip.
 */
export const IDLE_MOTION = { breathPeriodSeconds: 3.1, breathAmount: 0.007, swayPeriodSeconds: 4.7, swayAmount: 0.006 } as const;

/** Feathered ellipse over the muzzle and chin, in crop units: where the generated crop replaces the photo. */
const BLEND_MASK = { centreX: 0.5, centreY: 0.79, radiusX: 0.34, radiusY: 0.24, feather: 0.35 } as const;

export class FrameCompositor {
  readonly width: number;
  readonly height: number;
  readonly frameBytes: number;
  private readonly source: Buffer;
  private readonly working: Buffer;
  private readonly crop: CropBox;
  private readonly faceSize: number;
  private readonly fps: number;
  private readonly idleMotion: boolean;
  private readonly overlay: Overlay | undefined;
  // Per crop pixel: bilinear taps into the S×S generated crop and the blend weight (0-256).
  private readonly tapX0: Int32Array;
  private readonly tapX1: Int32Array;
  private readonly weightX: Float32Array;
  private readonly tapY0: Int32Array;
  private readonly tapY1: Int32Array;
  private readonly weightY: Float32Array;
  private readonly alpha: Uint16Array;
  private readonly maskRows: [number, number];

  constructor(options: { frame: RgbImage; crop: CropBox; faceSize: number; fps: number; idleMotion?: boolean; overlay?: Overlay }) {
    const { frame, crop, faceSize } = options;
    this.width = frame.width;
    this.height = frame.height;
    this.frameBytes = frame.width * frame.height * 3;
    this.source = Buffer.from(frame.data);
    this.working = Buffer.from(frame.data);
    this.crop = crop;
    this.faceSize = faceSize;
    this.fps = options.fps;
    this.idleMotion = options.idleMotion ?? true;
    this.overlay = options.overlay;

    const side = crop.side;
    const taps = (n: number) => {
      const t0 = new Int32Array(n);
      const t1 = new Int32Array(n);
      const w = new Float32Array(n);
      for (let i = 0; i < n; i++) {
        const position = Math.max(0, Math.min(faceSize - 1, ((i + 0.5) * faceSize) / n - 0.5));
        t0[i] = Math.floor(position);
        t1[i] = Math.min(faceSize - 1, t0[i]! + 1);
        w[i] = position - t0[i]!;
      }
      return [t0, t1, w] as const;
    };
    [this.tapX0, this.tapX1, this.weightX] = taps(side);
    [this.tapY0, this.tapY1, this.weightY] = taps(side);

    this.alpha = new Uint16Array(side * side);
    let firstRow = side;
    let lastRow = -1;
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const dx = ((x + 0.5) / side - BLEND_MASK.centreX) / BLEND_MASK.radiusX;
        const dy = ((y + 0.5) / side - BLEND_MASK.centreY) / BLEND_MASK.radiusY;
        const r = Math.sqrt(dx * dx + dy * dy);
        const a = Math.round(256 * Math.max(0, Math.min(1, (1 - r) / BLEND_MASK.feather)));
        this.alpha[y * side + x] = a;
        if (a > 0) {
          firstRow = Math.min(firstRow, y);
          lastRow = Math.max(lastRow, y);
        }
      }
    }
    this.maskRows = [firstRow, lastRow];
  }

  /**
   * Writes frame `index` into `out` (width×height×3 RGB): the generated crop (3×S×S BGR planar,
   * 0-1, at `generated[offset..]`) blended over the photo, then idle motion, then the overlay.
   */
  composeFrame(index: number, generated: Float32Array, offset: number, out: Buffer): void {
    const { crop, faceSize, working, source, width } = this;
    const plane = faceSize * faceSize;
    const [firstRow, lastRow] = this.maskRows;
    for (let y = firstRow; y <= lastRow; y++) {
      const y0 = this.tapY0[y]! * faceSize;
      const y1 = this.tapY1[y]! * faceSize;
      const wy = this.weightY[y]!;
      const rowStart = ((crop.top + y) * width + crop.left) * 3;
      for (let x = 0; x < crop.side; x++) {
        const a = this.alpha[y * crop.side + x]!;
        const pixel = rowStart + x * 3;
        if (a === 0) continue;
        const x0 = this.tapX0[x]!;
        const x1 = this.tapX1[x]!;
        const wx = this.weightX[x]!;
        for (let c = 0; c < 3; c++) {
          const base = offset + (2 - c) * plane; // BGR plane for RGB channel c
          const top = generated[base + y0 + x0]! + (generated[base + y0 + x1]! - generated[base + y0 + x0]!) * wx;
          const bottom = generated[base + y1 + x0]! + (generated[base + y1 + x1]! - generated[base + y1 + x0]!) * wx;
          const value = Math.max(0, Math.min(255, (top + (bottom - top) * wy) * 255));
          const original = source[pixel + c]!;
          working[pixel + c] = original + (((value - original) * a) >> 8);
        }
      }
    }
    if (this.idleMotion) this.applyIdleMotion(index, out);
    else working.copy(out);
    if (this.overlay) drawOverlay(out, width, this.overlay);
  }

  /** Rows are resampled with weights constant along the row: four taps, integer arithmetic. */
  private applyIdleMotion(index: number, out: Buffer): void {
    const { width, height, working } = this;
    const t = index / this.fps;
    const stretch = 1 + IDLE_MOTION.breathAmount * (0.5 - 0.5 * Math.cos((2 * Math.PI * t) / IDLE_MOTION.breathPeriodSeconds));
    const sway = IDLE_MOTION.swayAmount * width * Math.sin((2 * Math.PI * t) / IDLE_MOTION.swayPeriodSeconds);
    const bottom = height - 1;
    const rowBytes = width * 3;
    for (let y = 0; y < height; y++) {
      const sourceY = bottom - (bottom - y) / stretch;
      const r0 = Math.max(0, Math.floor(sourceY));
      const r1 = Math.min(bottom, r0 + 1);
      const fy = Math.round((sourceY - r0) * 256);
      const shift = (sway * (bottom - y)) / bottom;
      const floorShift = Math.floor(shift);
      const fx = Math.round((shift - floorShift) * 256);
      // Output x samples source x - shift: between columns x - floorShift - 1 (weight fx) and x - floorShift.
      const w00 = (256 - fx) * (256 - fy);
      const w01 = fx * (256 - fy);
      const w10 = (256 - fx) * fy;
      const w11 = fx * fy;
      const row0 = r0 * rowBytes;
      const row1 = r1 * rowBytes;
      const outRow = y * rowBytes;
      for (let x = 0; x < width; x++) {
        let sx0 = x - floorShift;
        let sx1 = sx0 - 1;
        if (sx0 < 0) sx0 = 0;
        else if (sx0 >= width) sx0 = width - 1;
        if (sx1 < 0) sx1 = 0;
        else if (sx1 >= width) sx1 = width - 1;
        const a = row0 + sx0 * 3;
        const b = row0 + sx1 * 3;
        const c = row1 + sx0 * 3;
        const d = row1 + sx1 * 3;
        const o = outRow + x * 3;
        out[o] = (working[a]! * w00 + working[b]! * w01 + working[c]! * w10 + working[d]! * w11 + 32768) >> 16;
        out[o + 1] = (working[a + 1]! * w00 + working[b + 1]! * w01 + working[c + 1]! * w10 + working[d + 1]! * w11 + 32768) >> 16;
        out[o + 2] = (working[a + 2]! * w00 + working[b + 2]! * w01 + working[c + 2]! * w10 + working[d + 2]! * w11 + 32768) >> 16;
      }
    }
  }
}

export function drawOverlay(frame: Buffer, frameWidth: number, overlay: Overlay): void {
  for (let y = 0; y < overlay.height; y++) {
    for (let x = 0; x < overlay.width; x++) {
      const o = (y * overlay.width + x) * 4;
      const a = overlay.rgba[o + 3]!;
      if (a === 0) continue;
      const p = ((overlay.top + y) * frameWidth + overlay.left + x) * 3;
      for (let c = 0; c < 3; c++) frame[p + c] = frame[p + c]! + (((overlay.rgba[o + c]! - frame[p + c]!) * a + 127) / 255) | 0;
    }
  }
}
