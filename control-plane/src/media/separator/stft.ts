/**
 * The short-time Fourier transform of Spleeter's recipe, as torch.stft/istft compute it with `center: true` and zero
 * padding: a periodic Hann window of N_FFT samples every HOP samples, frame t centred on sample t·HOP. Two real
 * signals share each complex FFT (the left channel in the real part, the right in the imaginary part; two frames in
 * one inverse), which halves the transforms.
 */
const N_FFT = 4096;
const HOP = 1024;
const HALF = N_FFT / 2;
const LOG2 = Math.log2(N_FFT);

/** Twiddles e^{-2πik/N} and the bit-reversal permutation of a radix-2 FFT of N_FFT points. */
const COS = new Float64Array(HALF);
const SIN = new Float64Array(HALF);
for (let k = 0; k < HALF; k++) {
  COS[k] = Math.cos((2 * Math.PI * k) / N_FFT);
  SIN[k] = -Math.sin((2 * Math.PI * k) / N_FFT);
}
const REVERSED = new Uint32Array(N_FFT);
for (let i = 0; i < N_FFT; i++) {
  let r = 0;
  for (let bit = 0; bit < LOG2; bit++) r |= ((i >> bit) & 1) << (LOG2 - 1 - bit);
  REVERSED[i] = r;
}
/** torch.hann_window(N_FFT) (periodic). */
const WINDOW = new Float64Array(N_FFT);
for (let n = 0; n < N_FFT; n++) WINDOW[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / N_FFT);

/** In-place radix-2 FFT of (re, im); `inverse` conjugates the twiddles (no 1/N scaling). */
function fft(re: Float64Array, im: Float64Array, inverse: boolean): void {
  for (let i = 0; i < N_FFT; i++) {
    const j = REVERSED[i]!;
    if (j > i) {
      const tr = re[i]!;
      re[i] = re[j]!;
      re[j] = tr;
      const ti = im[i]!;
      im[i] = im[j]!;
      im[j] = ti;
    }
  }
  const sign = inverse ? -1 : 1;
  for (let size = 2; size <= N_FFT; size <<= 1) {
    const half = size >> 1;
    const step = N_FFT / size;
    for (let start = 0; start < N_FFT; start += size) {
      for (let k = 0; k < half; k++) {
        const wr = COS[k * step]!;
        const wi = sign * SIN[k * step]!;
        const a = start + k;
        const b = a + half;
        const xr = re[b]! * wr - im[b]! * wi;
        const xi = re[b]! * wi + im[b]! * wr;
        re[b] = re[a]! - xr;
        im[b] = im[a]! - xi;
        re[a] = re[a]! + xr;
        im[a] = im[a]! + xi;
      }
    }
  }
}

/** Frames of a signal of `samples` samples: torch.stft's 1 + ⌊samples / HOP⌋ with centring. */
const frameCount = (samples: number) => 1 + Math.floor(samples / HOP);

/** A stereo STFT's lowest `bins` bins, frame-major: value (frame t, bin f) of a channel at t·bins + f. */
export interface StereoSpectrum {
  frames: number;
  bins: number;
  leftRe: Float32Array;
  leftIm: Float32Array;
  rightRe: Float32Array;
  rightIm: Float32Array;
}

/** The STFT of both channels (equal lengths), keeping bins [0, bins). */
export function stereoStft(left: Float32Array, right: Float32Array, bins: number): StereoSpectrum {
  const samples = left.length;
  const frames = frameCount(samples);
  const spectrum: StereoSpectrum = {
    frames,
    bins,
    leftRe: new Float32Array(frames * bins),
    leftIm: new Float32Array(frames * bins),
    rightRe: new Float32Array(frames * bins),
    rightIm: new Float32Array(frames * bins),
  };
  const re = new Float64Array(N_FFT);
  const im = new Float64Array(N_FFT);
  for (let t = 0; t < frames; t++) {
    const origin = t * HOP - HALF;
    for (let n = 0; n < N_FFT; n++) {
      const i = origin + n;
      const inside = i >= 0 && i < samples;
      re[n] = inside ? left[i]! * WINDOW[n]! : 0;
      im[n] = inside ? right[i]! * WINDOW[n]! : 0;
    }
    fft(re, im, false);
    // Z = L + iR: L[k] = (Z[k] + conj Z[N-k]) / 2, R[k] = (Z[k] - conj Z[N-k]) / 2i.
    const row = t * bins;
    for (let k = 0; k < bins; k++) {
      const m = k === 0 ? 0 : N_FFT - k;
      const zr = re[k]!;
      const zi = im[k]!;
      const cr = re[m]!;
      const ci = -im[m]!;
      spectrum.leftRe[row + k] = (zr + cr) / 2;
      spectrum.leftIm[row + k] = (zi + ci) / 2;
      spectrum.rightRe[row + k] = (zi - ci) / 2;
      spectrum.rightIm[row + k] = -(zr - cr) / 2;
    }
  }
  return spectrum;
}

/**
 * The inverse STFT (torch.istft with `center: true`) of a one-channel spectrum given for bins [0, bins) and zero
 * above, frame-major as in StereoSpectrum, cut to `samples` samples: windowed overlap-add divided by the summed
 * squared window.
 */
export function inverseStft(re: Float32Array, im: Float32Array, frames: number, bins: number, samples: number): Float32Array {
  const padded = new Float64Array((frames - 1) * HOP + N_FFT);
  const envelope = new Float64Array(padded.length);
  const zr = new Float64Array(N_FFT);
  const zi = new Float64Array(N_FFT);
  // Two frames per inverse FFT: A + iB of two Hermitian spectra transforms to a + ib.
  for (let t = 0; t < frames; t += 2) {
    zr.fill(0);
    zi.fill(0);
    const second = t + 1 < frames;
    for (let k = 0; k < bins; k++) {
      const a = t * bins + k;
      const ar = re[a]!;
      const ai = k === 0 ? 0 : im[a]!;
      const br = second ? re[a + bins]! : 0;
      const bi = second && k > 0 ? im[a + bins]! : 0;
      // Bin k of A + iB, and bin N-k (the conjugates of A's and B's bin k).
      zr[k] = ar - bi;
      zi[k] = ai + br;
      if (k > 0) {
        zr[N_FFT - k] = ar + bi;
        zi[N_FFT - k] = -ai + br;
      }
    }
    fft(zr, zi, true);
    for (const [frame, part] of second ? ([[t, zr], [t + 1, zi]] as const) : ([[t, zr]] as const)) {
      const origin = frame * HOP;
      for (let n = 0; n < N_FFT; n++) {
        padded[origin + n] = padded[origin + n]! + (part[n]! / N_FFT) * WINDOW[n]!;
        envelope[origin + n] = envelope[origin + n]! + WINDOW[n]! * WINDOW[n]!;
      }
    }
  }
  const out = new Float32Array(samples);
  for (let i = 0; i < samples; i++) {
    const e = envelope[i + HALF]!;
    out[i] = e > 1e-11 ? padded[i + HALF]! / e : 0;
  }
  return out;
}
