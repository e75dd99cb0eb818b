/** Catmull-Rom weights of the four taps around a sample at fraction t (0-1) past the second one. */
function catmullRom(t: number, into: Float64Array): void {
  into[0] = ((-0.5 * t + 1) * t - 0.5) * t;
  into[1] = (1.5 * t - 2.5) * t * t + 1;
  into[2] = ((-1.5 * t + 2) * t + 0.5) * t;
  into[3] = (0.5 * t - 0.5) * t * t;
}

export const smoothstep = (edge0: number, edge1: number, x: number): number => {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
};

/**
 * Reads the still photo between its pixels with Catmull-Rom (sharp, unlike bilinear), so moved fur and
 * turned beaks keep the photo's detail.
 */
export class PhotoSampler {
  /** Scratch for the sampling weights (no allocation per pixel). */
  private readonly tapsX = new Float64Array(4);
  private readonly tapsY = new Float64Array(4);

  constructor(
    private readonly source: Buffer,
    readonly width: number,
    readonly height: number,
  ) {}

  /** Catmull-Rom sample of the photo at (x, y), written to `target[at..at+3]`, each channel scaled by `gain`. */
  sample(x: number, y: number, target: Buffer, at: number, gain: number): void {
    const { source, width, height } = this;
    const x1 = Math.floor(x);
    const y1 = Math.floor(y);
    const { tapsX, tapsY } = this;
    catmullRom(x - x1, tapsX);
    catmullRom(y - y1, tapsY);
    const wx0 = tapsX[0]!;
    const wx1 = tapsX[1]!;
    const wx2 = tapsX[2]!;
    const wx3 = tapsX[3]!;
    const cx0 = Math.min(width - 1, Math.max(0, x1 - 1)) * 3;
    const cx1 = Math.min(width - 1, Math.max(0, x1)) * 3;
    const cx2 = Math.min(width - 1, Math.max(0, x1 + 1)) * 3;
    const cx3 = Math.min(width - 1, Math.max(0, x1 + 2)) * 3;
    let r = 0;
    let g = 0;
    let b = 0;
    for (let j = 0; j < 4; j++) {
      const row = Math.min(height - 1, Math.max(0, y1 - 1 + j)) * width * 3;
      const w = tapsY[j]!;
      const a0 = row + cx0;
      const a1 = row + cx1;
      const a2 = row + cx2;
      const a3 = row + cx3;
      r += w * (wx0 * source[a0]! + wx1 * source[a1]! + wx2 * source[a2]! + wx3 * source[a3]!);
      g += w * (wx0 * source[a0 + 1]! + wx1 * source[a1 + 1]! + wx2 * source[a2 + 1]! + wx3 * source[a3 + 1]!);
      b += w * (wx0 * source[a0 + 2]! + wx1 * source[a1 + 2]! + wx2 * source[a2 + 2]! + wx3 * source[a3 + 2]!);
    }
    target[at] = Math.min(255, Math.max(0, r * gain + 0.5));
    target[at + 1] = Math.min(255, Math.max(0, g * gain + 0.5));
    target[at + 2] = Math.min(255, Math.max(0, b * gain + 0.5));
  }

  /** Catmull-Rom sample down column x (an integer) at height y: the upright jaw moves fur only vertically. */
  sampleColumn(x: number, y: number, target: Buffer, at: number, gain: number): void {
    const { source, width, height } = this;
    const y1 = Math.floor(y);
    const taps = this.tapsY;
    catmullRom(y - y1, taps);
    const w0 = taps[0]!;
    const w1 = taps[1]!;
    const w2 = taps[2]!;
    const w3 = taps[3]!;
    const stride = width * 3;
    const column = x * 3;
    const r0 = Math.min(height - 1, Math.max(0, y1 - 1)) * stride + column;
    const r1 = Math.min(height - 1, Math.max(0, y1)) * stride + column;
    const r2 = Math.min(height - 1, Math.max(0, y1 + 1)) * stride + column;
    const r3 = Math.min(height - 1, Math.max(0, y1 + 2)) * stride + column;
    for (let c = 0; c < 3; c++) {
      const value = (w0 * source[r0 + c]! + w1 * source[r1 + c]! + w2 * source[r2 + c]! + w3 * source[r3 + c]!) * gain;
      target[at + c] = Math.min(255, Math.max(0, value + 0.5));
    }
  }
}
