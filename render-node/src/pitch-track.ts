import { hopLevels, hopOf, percentile } from './signal.ts';

/**
 * The sung pitch (fundamental frequency) of a voice, every 10 ms, by YIN (de Cheveigné and Kawahara, 2002) over 40 ms
 * windows: the voice is low-passed and taken down to about 8 kHz (plenty for a fundamental under 1 kHz), the
 * difference function is normalised by its running mean, and the first lag under THRESHOLD (moved to its local
 * minimum, refined by a parabola) is the period. Hops quieter than QUIET_DB under the clip's loud level, and hops with
 * no lag under the threshold (noise, breath, consonants), have no pitch (0).
 */
const WINDOW_SECONDS = 0.04;
/** A singing voice's fundamental: a bass's low notes to a soprano's high ones. */
const F0_RANGE_HZ = [70, 1000] as const;
const ANALYSIS_RATE = 8000;
/**
 * YIN's absolute threshold on the normalised difference (0.1-0.15 in the paper): the first dip under it is the period.
 * A voice with a rough source (a synthetic one, a breathy singer) may have none; then the deepest dip, if it is under
 * WEAK_THRESHOLD (noise stays above 0.5).
 */
const THRESHOLD = 0.15;
const WEAK_THRESHOLD = 0.35;
const QUIET_DB = 35;
/** Taps of the windowed-sinc low-pass before taking every n-th sample (odd). */
const LOWPASS_TAPS = 31;

export interface PitchTrack {
  /** Hops a second (100). */
  rate: number;
  /** Hz per hop; 0 where there is no pitch. */
  f0: Float32Array;
}

/** Low-passes `samples` under the new Nyquist frequency and keeps every `factor`-th sample. */
function decimate(samples: Float32Array, factor: number): Float32Array {
  if (factor <= 1) return samples;
  const half = (LOWPASS_TAPS - 1) / 2;
  const cutoff = 0.45 / factor;
  const taps = Float64Array.from({ length: LOWPASS_TAPS }, (_, i) => {
    const k = i - half;
    const sinc = k === 0 ? 2 * cutoff : Math.sin(2 * Math.PI * cutoff * k) / (Math.PI * k);
    return sinc * (0.54 + 0.46 * Math.cos((Math.PI * k) / (half + 1)));
  });
  const gain = taps.reduce((a, b) => a + b, 0);
  const out = new Float32Array(Math.ceil(samples.length / factor));
  for (let o = 0; o < out.length; o++) {
    const centre = o * factor;
    let sum = 0;
    for (let i = 0; i < LOWPASS_TAPS; i++) {
      const s = centre + i - half;
      if (s >= 0 && s < samples.length) sum += samples[s]! * taps[i]!;
    }
    out[o] = sum / gain;
  }
  return out;
}

/** The pitch of `samples` (mono) every 10 ms (PitchTrack). */
export function pitchTrack(samples: Float32Array, sampleRate: number): PitchTrack {
  const { hop, rate } = hopOf(sampleRate);
  const hops = Math.max(1, Math.ceil(samples.length / hop));
  const level = hopLevels(samples, sampleRate, WINDOW_SECONDS);
  const quiet = percentile(level, 0.95) - QUIET_DB;
  const factor = Math.max(1, Math.floor(sampleRate / ANALYSIS_RATE));
  const x = decimate(samples, factor);
  const analysisRate = sampleRate / factor;
  const window = Math.round(WINDOW_SECONDS * analysisRate);
  const minLag = Math.max(2, Math.floor(analysisRate / F0_RANGE_HZ[1]));
  const maxLag = Math.min(window, Math.ceil(analysisRate / F0_RANGE_HZ[0]));
  const difference = new Float64Array(maxLag + 2);
  const f0 = new Float32Array(hops);
  for (let h = 0; h < hops; h++) {
    if (level[h]! < quiet) continue;
    // The window (and the lags past it) centred on the hop.
    const start = Math.round((h * hop) / factor) - Math.round((window + maxLag) / 2);
    if (start < 0 || start + window + maxLag + 1 > x.length) continue;
    let running = 0;
    let found = 0;
    for (let lag = 1; lag <= maxLag + 1; lag++) {
      let sum = 0;
      for (let j = 0; j < window; j++) {
        const d = x[start + j]! - x[start + j + lag]!;
        sum += d * d;
      }
      running += sum;
      // The cumulative-mean-normalised difference.
      difference[lag] = running > 0 ? (sum * lag) / running : 1;
    }
    let deepest = minLag;
    for (let lag = minLag; lag <= maxLag; lag++) {
      if (difference[lag]! < difference[deepest]!) deepest = lag;
      if (difference[lag]! >= THRESHOLD) continue;
      while (lag + 1 <= maxLag && difference[lag + 1]! < difference[lag]!) lag++;
      found = lag;
      break;
    }
    if (!found && difference[deepest]! < WEAK_THRESHOLD) found = deepest;
    if (!found) continue;
    const [a, b, c] = [difference[found - 1]!, difference[found]!, difference[found + 1]!];
    const curvature = a - 2 * b + c;
    const refined = found + (curvature > 0 ? (0.5 * (a - c)) / curvature : 0);
    f0[h] = analysisRate / refined;
  }
  return { rate, f0 };
}
