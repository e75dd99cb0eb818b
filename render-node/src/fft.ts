/**
 * A mixed-radix complex FFT for any length whose prime factors are small (n_fft = 800 = 2⁵·5²
 * in the Wav2Lip recipe, so a power-of-two FFT does not fit). Plans are cached per length.
 */
export interface FftPlan {
  readonly size: number;
  /** In-place transform of (re, im). */
  transform(re: Float64Array, im: Float64Array): void;
}

function factorize(n: number): number[] {
  const factors: number[] = [];
  let rest = n;
  for (const p of [4, 2, 3, 5]) {
    while (rest % p === 0) {
      factors.push(p);
      rest /= p;
    }
  }
  for (let p = 7; rest > 1; p += 2) {
    while (rest % p === 0) {
      factors.push(p);
      rest /= p;
    }
  }
  return factors;
}

const plans = new Map<number, FftPlan>();

export function fftPlan(size: number): FftPlan {
  const cached = plans.get(size);
  if (cached) return cached;
  const factors = factorize(size);
  const cos = new Float64Array(size);
  const sin = new Float64Array(size);
  for (let j = 0; j < size; j++) {
    cos[j] = Math.cos((2 * Math.PI * j) / size);
    sin[j] = -Math.sin((2 * Math.PI * j) / size);
  }
  const outRe = new Float64Array(size);
  const outIm = new Float64Array(size);
  const maxFactor = Math.max(1, ...factors);
  const tRe = new Float64Array(maxFactor);
  const tIm = new Float64Array(maxFactor);

  // Decimation in time: out[offset .. offset+n) receives the DFT of in[start], in[start+stride], ...
  const recurse = (inRe: Float64Array, inIm: Float64Array, start: number, stride: number, n: number, offset: number, level: number): void => {
    if (n === 1) {
      outRe[offset] = inRe[start]!;
      outIm[offset] = inIm[start]!;
      return;
    }
    const p = factors[level]!;
    const m = n / p;
    for (let q = 0; q < p; q++) recurse(inRe, inIm, start + q * stride, stride * p, m, offset + q * m, level + 1);
    const twiddleStep = size / n;
    for (let k = 0; k < m; k++) {
      for (let q = 0; q < p; q++) {
        const index = offset + q * m + k;
        const w = (q * k * twiddleStep) % size;
        const re = outRe[index]!;
        const im = outIm[index]!;
        tRe[q] = re * cos[w]! - im * sin[w]!;
        tIm[q] = re * sin[w]! + im * cos[w]!;
      }
      for (let r = 0; r < p; r++) {
        let sumRe = 0;
        let sumIm = 0;
        const rootStep = (r * size) / p;
        for (let q = 0; q < p; q++) {
          const w = (q * rootStep) % size;
          sumRe += tRe[q]! * cos[w]! - tIm[q]! * sin[w]!;
          sumIm += tRe[q]! * sin[w]! + tIm[q]! * cos[w]!;
        }
        outRe[offset + r * m + k] = sumRe;
        outIm[offset + r * m + k] = sumIm;
      }
    }
  };

  const plan: FftPlan = {
    size,
    transform(re, im) {
      recurse(re, im, 0, 1, size, 0, 0);
      re.set(outRe);
      im.set(outIm);
    },
  };
  plans.set(size, plan);
  return plan;
}
