import type { CropBox } from './face-crop.ts';
import type { RgbImage } from './image-decoder.ts';

/** An RGBA overlay (the watermark) drawn at a fixed place over every frame, after any motion. */
export interface Overlay {
  left: number;
  top: number;
  width: number;
  height: number;
  rgba: Buffer;
}

/**
 * 'replace' pastes the generated crop as Wav2Lip's inference script does; 'residual' adds the
 * model's change (generated − reference, both at S×S) to the full-resolution photo, so a 96 px
 * model does not blur the muzzle where it changed nothing. Residual is the default.
 */
export type BlendMode = 'residual' | 'replace';

/** Feathered ellipse over the muzzle and chin, in crop units: where the generated crop replaces the photo. */
const BLEND_MASK = { centreX: 0.5, centreY: 0.79, radiusX: 0.34, radiusY: 0.24, feather: 0.35 } as const;

export class FrameCompositor {
  readonly width: number;
  readonly height: number;
  private readonly source: Buffer;
  private readonly working: Buffer;
  private readonly crop: CropBox;
  private readonly faceSize: number;
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

  private readonly mode: BlendMode;
  /** 'residual' mode: the reference crop as the model saw it, upsampled like the output (RGB, crop-sized). */
  private readonly referenceUp: Float32Array | undefined;

  constructor(options: {
    frame: RgbImage;
    crop: CropBox;
    faceSize: number;
    /** The contract's face input (6×S×S); channels 3-5 are the reference crop. Needed for 'residual'. */
    faceInput?: Float32Array;
    blend?: BlendMode;
    overlay?: Overlay;
  }) {
    const { frame, crop, faceSize } = options;
    this.width = frame.width;
    this.height = frame.height;
    this.source = Buffer.from(frame.data);
    this.working = Buffer.from(frame.data);
    this.crop = crop;
    this.faceSize = faceSize;
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
        // Crop pixels beyond the frame edge (a crop hanging off the photo) are never written.
        const inside = crop.left + x >= 0 && crop.left + x < frame.width && crop.top + y >= 0 && crop.top + y < frame.height;
        const weight = inside ? a : 0;
        this.alpha[y * side + x] = weight;
        if (weight > 0) {
          firstRow = Math.min(firstRow, y);
          lastRow = Math.max(lastRow, y);
        }
      }
    }
    this.maskRows = [firstRow, lastRow];

    this.mode = options.blend ?? (options.faceInput ? 'residual' : 'replace');
    if (this.mode === 'residual') {
      if (!options.faceInput) throw new Error('residual blending needs the face input');
      const plane = faceSize * faceSize;
      this.referenceUp = new Float32Array(side * side * 3);
      for (let y = firstRow; y <= lastRow; y++) {
        for (let x = 0; x < side; x++) {
          for (let c = 0; c < 3; c++) {
            this.referenceUp[(y * side + x) * 3 + c] = this.sample(options.faceInput, (5 - c) * plane, x, y);
          }
        }
      }
    }
  }

  /** Bilinear sample of one S×S plane at crop pixel (x, y), scaled to 0-255. */
  private sample(planes: Float32Array, base: number, x: number, y: number): number {
    const { faceSize } = this;
    const y0 = this.tapY0[y]! * faceSize;
    const y1 = this.tapY1[y]! * faceSize;
    const x0 = this.tapX0[x]!;
    const x1 = this.tapX1[x]!;
    const wx = this.weightX[x]!;
    const top = planes[base + y0 + x0]! + (planes[base + y0 + x1]! - planes[base + y0 + x0]!) * wx;
    const bottom = planes[base + y1 + x0]! + (planes[base + y1 + x1]! - planes[base + y1 + x0]!) * wx;
    return (top + (bottom - top) * this.weightY[y]!) * 255;
  }

  /**
   * Writes a frame into `out` (width×height×3 RGB): the generated crop (3×S×S BGR planar, 0-1, at
   * `generated[offset..]`) blended over the photo, then the overlay.
   */
  composeFrame(generated: Float32Array, offset: number, out: Buffer): void {
    const { crop, faceSize, working, source, width } = this;
    const plane = faceSize * faceSize;
    const [firstRow, lastRow] = this.maskRows;
    const reference = this.referenceUp;
    const { tapX0, tapX1, weightX } = this;
    for (let y = firstRow; y <= lastRow; y++) {
      const rowStart = ((crop.top + y) * width + crop.left) * 3;
      const y0 = this.tapY0[y]! * faceSize;
      const y1 = this.tapY1[y]! * faceSize;
      const wy = this.weightY[y]!;
      for (let x = 0; x < crop.side; x++) {
        const a = this.alpha[y * crop.side + x]!;
        if (a === 0) continue;
        const pixel = rowStart + x * 3;
        const cropPixel = (y * crop.side + x) * 3;
        const x0 = tapX0[x]!;
        const x1 = tapX1[x]!;
        const wx = weightX[x]!;
        for (let c = 0; c < 3; c++) {
          const base = offset + (2 - c) * plane; // BGR plane for RGB channel c
          const p00 = generated[base + y0 + x0]!;
          const p10 = generated[base + y1 + x0]!;
          const top = p00 + (generated[base + y0 + x1]! - p00) * wx;
          const bottom = p10 + (generated[base + y1 + x1]! - p10) * wx;
          const generatedValue = (top + (bottom - top) * wy) * 255;
          const original = source[pixel + c]!;
          // Residual: add what the model changed to the sharp photo; replace: paste the (upsampled) crop.
          const target = reference ? original + generatedValue - reference[cropPixel + c]! : generatedValue;
          const value = target < 0 ? 0 : target > 255 ? 255 : target;
          working[pixel + c] = original + (((value - original) * a) >> 8);
        }
      }
    }
    working.copy(out);
    if (this.overlay) drawOverlay(out, width, this.overlay);
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
