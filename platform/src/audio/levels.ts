/** The level measures the audio analyses share (render-node/src/signal.ts, vocal-activity.ts, the control plane's voice check). */

/** Audio is analysed in hops of 10 ms (100 a second). */
const HOP_SECONDS = 0.01;

/** The hop in samples, and hops a second, at `sampleRate`. */
export function hopOf(sampleRate: number): { hop: number; rate: number } {
  const hop = Math.round(HOP_SECONDS * sampleRate);
  return { hop, rate: sampleRate / hop };
}

/** The `p` quantile (0-1) of `values`. */
export function percentile(values: ArrayLike<number>, p: number): number {
  const sorted = Float32Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.floor(p * (sorted.length - 1))))] ?? 0;
}

/** The level (dB of the mean square) of `samples` over `windowSeconds` around each hop. */
export function hopLevels(samples: Float32Array, sampleRate: number, windowSeconds = 0.04): Float32Array {
  const { hop } = hopOf(sampleRate);
  const hops = Math.max(1, Math.ceil(samples.length / hop));
  const half = Math.round((windowSeconds * sampleRate) / 2);
  // Running sums of squares: each hop's window costs two lookups.
  const squares = new Float64Array(samples.length + 1);
  for (let i = 0; i < samples.length; i++) squares[i + 1] = squares[i]! + samples[i]! * samples[i]!;
  const out = new Float32Array(hops);
  for (let h = 0; h < hops; h++) {
    const from = Math.max(0, h * hop - half);
    const to = Math.min(samples.length, h * hop + half);
    out[h] = 10 * Math.log10(Math.max(0, squares[to]! - squares[from]!) / Math.max(1, to - from) + 1e-12);
  }
  return out;
}

/** Where a stem is loud: the 95th percentile of its hop levels (dB), as the band's and the voice's loud levels are read. */
export function loudLevel(samples: Float32Array, sampleRate: number): number {
  return percentile(hopLevels(samples, sampleRate), 0.95);
}
