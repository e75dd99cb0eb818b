/** Small helpers the audio analyses share (voice-driver.ts, vocal-activity.ts, beat-tracker.ts, sync-report.ts). */

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

/** Follows `target` with separate rise and fall speeds (one-pole smoothing). */
export function envelope(target: ArrayLike<number>, rate: number, attackSeconds: number, releaseSeconds: number): Float32Array {
  const attack = 1 - Math.exp(-1 / (attackSeconds * rate));
  const release = 1 - Math.exp(-1 / (releaseSeconds * rate));
  const out = new Float32Array(target.length);
  let level = 0;
  for (let i = 0; i < target.length; i++) {
    const value = target[i]!;
    level += (value - level) * (value > level ? attack : release);
    out[i] = level;
  }
  return out;
}

/** Mean of `values` (at `rate` per second) over each video frame's time span. */
export function perFrame(values: ArrayLike<number>, rate: number, fps: number, frames: number): Float32Array {
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    const from = Math.floor((f / fps) * rate);
    const to = Math.max(from + 1, Math.floor(((f + 1) / fps) * rate));
    let sum = 0;
    let count = 0;
    for (let i = from; i < to && i < values.length; i++) {
      sum += values[i]!;
      count++;
    }
    out[f] = count ? sum / count : 0;
  }
  return out;
}

/** Minimum (or maximum) of `values` over a window of `width` centred on each index (a monotonic deque: linear time). */
export function slidingExtreme(values: Float32Array, width: number, kind: 'min' | 'max'): Float32Array {
  const half = Math.floor(width / 2);
  const out = new Float32Array(values.length);
  const deque: number[] = [];
  const beaten = kind === 'min' ? (a: number, b: number) => a >= b : (a: number, b: number) => a <= b;
  let head = 0;
  for (let i = 0; i < values.length + half; i++) {
    if (i < values.length) {
      while (deque.length > head && beaten(values[deque[deque.length - 1]!]!, values[i]!)) deque.pop();
      deque.push(i);
    }
    const centre = i - half;
    if (centre < 0) continue;
    while (deque[head]! < centre - half) head++;
    out[centre] = values[deque[head]!]!;
  }
  return out;
}

/** Level in dB (RMS over `windowSeconds` centred on each hop) of `samples`, one value a hop. */
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

/** RMS of `samples` over each video frame. */
export function frameLoudness(samples: Float32Array, sampleRate: number, fps: number, frames: number): Float32Array {
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    const from = Math.round((f / fps) * sampleRate);
    const to = Math.min(samples.length, Math.round(((f + 1) / fps) * sampleRate));
    let sum = 0;
    for (let i = from; i < to; i++) sum += samples[i]! * samples[i]!;
    out[f] = to > from ? Math.sqrt(sum / (to - from)) : 0;
  }
  return out;
}

/** Pearson's r of two series of the same length; null when either is constant. */
export function pearson(x: ArrayLike<number>, y: ArrayLike<number>): number | null {
  const n = Math.min(x.length, y.length);
  if (n < 2) return null;
  let mx = 0;
  let my = 0;
  for (let i = 0; i < n; i++) {
    mx += x[i]!;
    my += y[i]!;
  }
  mx /= n;
  my /= n;
  let sxy = 0;
  let sxx = 0;
  let syy = 0;
  for (let i = 0; i < n; i++) {
    sxy += (x[i]! - mx) * (y[i]! - my);
    sxx += (x[i]! - mx) ** 2;
    syy += (y[i]! - my) ** 2;
  }
  return sxx > 0 && syy > 0 ? sxy / Math.sqrt(sxx * syy) : null;
}
