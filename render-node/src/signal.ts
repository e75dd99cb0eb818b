/**
 * Small helpers the audio analyses share (voice-driver.ts, beat-tracker.ts, song-drive.ts); the level measures are
 * the platform's (@petsing/platform/audio), which the control plane's voice check reads the same way.
 */
export { hopLevels, hopOf, percentile } from '@petsing/platform/audio';

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
