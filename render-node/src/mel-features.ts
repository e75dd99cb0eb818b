import { fftPlan } from './fft.ts';
import { MEL_BANDS, MEL_WINDOW } from './model-contract.ts';

/**
 * Wav2Lip's mel spectrogram (audio.py + hparams.py of the published inference code):
 * 16 kHz, pre-emphasis 0.97, STFT n_fft 800 / hop 200 / Hann window 800 centred with reflect
 * padding (librosa 0.7), magnitude (not power) through a Slaney mel filterbank of 80 bands from
 * 55 to 7600 Hz, 20·log10 with a 1e-5 floor minus the 20 dB reference level, then symmetric
 * normalisation of [-100, 0] dB to [-4, 4] with clipping.
 */
export const MEL_RECIPE = {
  sampleRate: 16_000,
  preemphasis: 0.97,
  nFft: 800,
  hop: 200,
  window: 800,
  bands: MEL_BANDS,
  fMin: 55,
  fMax: 7600,
  minLevelDb: -100,
  refLevelDb: 20,
  maxAbsValue: 4,
} as const;

/** Mel columns per second: 16000 / 200. */
const MEL_COLUMNS_PER_SECOND = MEL_RECIPE.sampleRate / MEL_RECIPE.hop;

export interface MelSpectrogram {
  bands: number;
  columns: number;
  /** Band-major, like numpy's (80, T): value of band b at column t is data[b * columns + t]. */
  data: Float32Array;
}

// Slaney's mel scale as librosa implements it (htk=False): linear below 1 kHz, logarithmic above.
function hzToMel(hz: number): number {
  const linear = hz / (200 / 3);
  if (hz < 1000) return linear;
  return 15 + Math.log(hz / 1000) / (Math.log(6.4) / 27);
}

function melToHz(mel: number): number {
  if (mel < 15) return (200 / 3) * mel;
  return 1000 * Math.exp((Math.log(6.4) / 27) * (mel - 15));
}

interface MelFilter {
  start: number;
  weights: Float64Array;
}

let filterbank: MelFilter[] | undefined;

/** librosa.filters.mel(sr=16000, n_fft=800, n_mels=80, fmin=55, fmax=7600), norm='slaney', stored sparsely. */
function melFilterbank(): MelFilter[] {
  if (filterbank) return filterbank;
  const { sampleRate, nFft, bands, fMin, fMax } = MEL_RECIPE;
  const bins = nFft / 2 + 1;
  const minMel = hzToMel(fMin);
  const maxMel = hzToMel(fMax);
  const edges = Array.from({ length: bands + 2 }, (_, i) => melToHz(minMel + ((maxMel - minMel) * i) / (bands + 1)));
  filterbank = [];
  for (let band = 0; band < bands; band++) {
    const [lower, centre, upper] = [edges[band]!, edges[band + 1]!, edges[band + 2]!];
    const norm = 2 / (upper - lower);
    const full = new Float64Array(bins);
    let first = -1;
    let last = -1;
    for (let bin = 0; bin < bins; bin++) {
      const hz = (bin * sampleRate) / nFft;
      const weight = Math.max(0, Math.min((hz - lower) / (centre - lower), (upper - hz) / (upper - centre)));
      if (weight > 0) {
        if (first < 0) first = bin;
        last = bin;
        full[bin] = weight * norm;
      }
    }
    filterbank.push(first < 0 ? { start: 0, weights: new Float64Array(0) } : { start: first, weights: full.slice(first, last + 1) });
  }
  return filterbank;
}

/** numpy.pad(mode='reflect') index mapping, repeated for signals shorter than the pad. */
function reflectIndex(index: number, length: number): number {
  if (length === 1) return 0;
  const period = 2 * (length - 1);
  let i = ((index % period) + period) % period;
  if (i >= length) i = period - i;
  return i;
}

export function melSpectrogram(samples: Float32Array): MelSpectrogram {
  const { preemphasis, nFft, hop, minLevelDb, refLevelDb, maxAbsValue } = MEL_RECIPE;
  const length = samples.length;
  const emphasised = new Float64Array(length);
  for (let i = 0; i < length; i++) emphasised[i] = samples[i]! - (i > 0 ? preemphasis * samples[i - 1]! : 0);

  const columns = length === 0 ? 0 : 1 + Math.floor(length / hop);
  const window = new Float64Array(nFft);
  for (let n = 0; n < nFft; n++) window[n] = 0.5 - 0.5 * Math.cos((2 * Math.PI * n) / nFft);
  const filters = melFilterbank();
  const plan = fftPlan(nFft);
  const re = new Float64Array(nFft);
  const im = new Float64Array(nFft);
  const magnitude = new Float64Array(nFft / 2 + 1);
  const data = new Float32Array(MEL_BANDS * columns);
  const minAmplitude = 10 ** (minLevelDb / 20);
  const pad = nFft / 2;

  for (let t = 0; t < columns; t++) {
    const origin = t * hop - pad;
    for (let n = 0; n < nFft; n++) {
      const source = origin + n;
      const value = source >= 0 && source < length ? emphasised[source]! : emphasised[reflectIndex(source, length)]!;
      re[n] = value * window[n]!;
      im[n] = 0;
    }
    plan.transform(re, im);
    for (let bin = 0; bin <= nFft / 2; bin++) magnitude[bin] = Math.hypot(re[bin]!, im[bin]!);
    for (let band = 0; band < MEL_BANDS; band++) {
      const { start, weights } = filters[band]!;
      let energy = 0;
      for (let j = 0; j < weights.length; j++) energy += weights[j]! * magnitude[start + j]!;
      const db = 20 * Math.log10(Math.max(minAmplitude, energy)) - refLevelDb;
      const normalised = 2 * maxAbsValue * ((db - minLevelDb) / -minLevelDb) - maxAbsValue;
      data[band * columns + t] = Math.min(maxAbsValue, Math.max(-maxAbsValue, normalised));
    }
  }
  return { bands: MEL_BANDS, columns, data };
}

/** First mel column of video frame `frame`: ⌊frame · 80 / fps⌋ (⌊i·3.2⌋ at 25 fps), as in Wav2Lip's inference loop. */
export function melStartColumn(frame: number, fps: number): number {
  return Math.floor((frame * MEL_COLUMNS_PER_SECOND) / fps);
}

/**
 * Copies the 80×16 window of `frame` into `target` at `offset`. Windows that would run past
 * the end are clamped to the last 16 columns (Wav2Lip does the same); audio shorter than 16
 * columns is padded with silence (-4).
 */
export function copyMelWindow(mel: MelSpectrogram, frame: number, fps: number, target: Float32Array, offset: number): void {
  const start = Math.max(0, Math.min(melStartColumn(frame, fps), mel.columns - MEL_WINDOW));
  for (let band = 0; band < MEL_BANDS; band++) {
    const row = band * mel.columns;
    const out = offset + band * MEL_WINDOW;
    for (let j = 0; j < MEL_WINDOW; j++) {
      const column = start + j;
      target[out + j] = column < mel.columns ? mel.data[row + column]! : -MEL_RECIPE.maxAbsValue;
    }
  }
}
