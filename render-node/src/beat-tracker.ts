import { hopLevels, hopOf, percentile, slidingExtreme } from './signal.ts';

/**
 * What the band plays, from the accompaniment stem (README, "The band drives the body"):
 *
 * 1. Onset strength, every 10 ms: the stem through four filters (a low-pass at 150 Hz, band-passes 150-600 and
 *    600-2400 Hz, a high-pass at 2400 Hz: RBJ biquads, so it costs a few multiplications a sample, no FFT), each
 *    band's energy over 20 ms in dB (floored 60 dB under the stem's loudest), and the sum of the bands' rises since
 *    the hop before (a log spectral flux in four bands: a kick, a snare, a hi-hat, a new chord all rise somewhere).
 * 2. Tempo: the autocorrelation of that envelope over the lags of 60-200 beats a minute, weighted by a broad
 *    preference for 120 (a log-normal of one octave, as librosa's), the best lag refined to a tenth of a hop
 *    together with the phase: the grid of beats whose onsets are strongest on average.
 * 3. Beats: that grid, each beat drawn half-way to the strongest onset within 6% of a beat of where it falls, so the
 *    grid follows a band that drifts a little.
 * 4. Downbeats: every fourth beat, from the one of the four phases whose beats have the strongest onsets in the two
 *    low bands (kick drum and bass) in all. A band with its kick on 1 and 3 may get its downbeats on the 3s.
 *
 * A band with no steady pulse (the autocorrelation's best weighted peak under MIN_PULSE, or beats too soft to be
 * heard: MIN_BEAT_RISE_DB) or a silent accompaniment has no beats: the head moves as it does for a voice alone.
 */
const BAND_EDGES_HZ = [0, 150, 600, 2400];
/** The bands of a kick drum and a bass line: the downbeat is the phase where they hit hardest. */
const LOW_BANDS = 2;
const FLOOR_DB = 60;
const TEMPO_BPM = { slowest: 60, fastest: 200, preferred: 120, octaves: 1 } as const;
const MIN_PULSE = 0.1;
/**
 * Beats must be heard: the bands' rises at the beats average at least this much (dB). A drum kit's hits give 30-100;
 * a held chord's or a swelling pad's ripple (periodic, so the autocorrelation alone would take it for a pulse) under 2.
 */
const MIN_BEAT_RISE_DB = 6;
const SNAP_SHARE = 0.06;
const BEATS_A_BAR = 4;
/**
 * The band plays where its level (RMS over 40 ms; the loudest within a half-second, so the gaps between hits count)
 * is within BAND_RANGE_DB of its loud level (95th percentile) and over -60 dBFS.
 */
const BAND_RANGE_DB = 30;
const BAND_HOLD_SECONDS = 0.5;
const QUIETEST_BAND_DB = -60;

export interface Beats {
  tempoBpm: number;
  /** Seconds of each beat. */
  times: number[];
  /** Seconds of each downbeat (a subset of `times`). */
  downbeats: number[];
}

export interface BandTrack {
  /** Hops a second (100). */
  rate: number;
  /** The accompaniment's loud level, dB (95th percentile of its 40 ms levels). */
  loudDb: number;
  /** 1 where the band plays, per hop. */
  playing: Uint8Array;
  /** Null without a steady pulse. */
  beats: Beats | null;
}

/** The band's activity, tempo, beats and downbeats from an accompaniment stem (mono samples). */
export function trackBand(accompaniment: Float32Array, sampleRate: number): BandTrack {
  const { rate } = hopOf(sampleRate);
  const level = hopLevels(accompaniment, sampleRate);
  const loudDb = percentile(level, 0.95);
  const held = slidingExtreme(level, Math.round(BAND_HOLD_SECONDS * rate), 'max');
  const threshold = Math.max(loudDb - BAND_RANGE_DB, QUIETEST_BAND_DB);
  const playing = held.map((value) => (value >= threshold ? 1 : 0));
  const beats = loudDb >= QUIETEST_BAND_DB ? findBeats(onsetStrength(accompaniment, sampleRate), rate) : null;
  return { rate, loudDb, playing: Uint8Array.from(playing), beats };
}

/** A biquad filter's coefficients (RBJ's cookbook), normalised by a0: [b0, b1, b2, a1, a2]. */
type Biquad = [number, number, number, number, number];

function biquad(kind: 'low' | 'band' | 'high', sampleRate: number, from: number, to = from): Biquad {
  const centre = kind === 'band' ? Math.sqrt(from * to) : from;
  const q = kind === 'band' ? centre / (to - from) : Math.SQRT1_2;
  const w = (2 * Math.PI * centre) / sampleRate;
  const cos = Math.cos(w);
  const alpha = Math.sin(w) / (2 * q);
  const b = kind === 'low' ? [(1 - cos) / 2, 1 - cos, (1 - cos) / 2] : kind === 'high' ? [(1 + cos) / 2, -(1 + cos), (1 + cos) / 2] : [alpha, 0, -alpha];
  const a0 = 1 + alpha;
  return [b[0]! / a0, b[1]! / a0, b[2]! / a0, (-2 * cos) / a0, (1 - alpha) / a0];
}

/** Onset strength, one value a hop (step 1 above): all bands, and the low ones alone (for the downbeats). */
function onsetStrength(samples: Float32Array, sampleRate: number): { all: Float32Array; low: Float32Array } {
  const { hop } = hopOf(sampleRate);
  const hops = Math.max(1, Math.ceil(samples.length / hop));
  const edges = BAND_EDGES_HZ;
  const filters = [biquad('low', sampleRate, edges[1]!), biquad('band', sampleRate, edges[1]!, edges[2]!), biquad('band', sampleRate, edges[2]!, edges[3]!), biquad('high', sampleRate, edges[3]!)];
  const bands = filters.length;
  // Energy per band and hop.
  const energy = new Float64Array(hops * bands);
  for (let b = 0; b < bands; b++) {
    const [b0, b1, b2, a1, a2] = filters[b]!;
    let x1 = 0;
    let x2 = 0;
    let y1 = 0;
    let y2 = 0;
    for (let h = 0; h < hops; h++) {
      let sum = 0;
      for (let i = h * hop; i < Math.min(samples.length, (h + 1) * hop); i++) {
        const x = samples[i]!;
        const y = b0 * x + b1 * x1 + b2 * x2 - a1 * y1 - a2 * y2;
        x2 = x1;
        x1 = x;
        y2 = y1;
        y1 = y;
        sum += y * y;
      }
      energy[h * bands + b] = sum;
    }
  }
  let loudest = 0;
  for (const value of energy) loudest = Math.max(loudest, value);
  const floor = loudest * 10 ** (-FLOOR_DB / 10) + 1e-20;
  // Each hop's level over two hops (20 ms), in dB.
  const db = new Float32Array(hops * bands);
  for (let i = 0; i < db.length; i++) db[i] = 10 * Math.log10(energy[i]! + (i >= bands ? energy[i - bands]! : 0) + floor);
  const all = new Float32Array(hops);
  const low = new Float32Array(hops);
  for (let h = 1; h < hops; h++) {
    for (let b = 0; b < bands; b++) {
      const rise = Math.max(0, db[h * bands + b]! - db[(h - 1) * bands + b]!);
      all[h]! += rise;
      if (b < LOW_BANDS) low[h]! += rise;
    }
  }
  return { all, low };
}

/** Mean onset strength at the grid `phase + k·period` (hops), each beat at the nearest hop. */
function gridStrength(onset: Float32Array, period: number, phase: number): number {
  let sum = 0;
  let count = 0;
  for (let t = phase; t < onset.length; t += period) {
    sum += onset[Math.round(t)] ?? 0;
    count++;
  }
  return count ? sum / count : 0;
}

/** Steps 2-4 above on an onset envelope at `rate` hops a second. */
function findBeats({ all: onset, low }: { all: Float32Array; low: Float32Array }, rate: number): Beats | null {
  const n = onset.length;
  let mean = 0;
  for (const value of onset) mean += value;
  mean /= n;
  const centred = onset.map((value) => value - mean);
  let power = 0;
  for (const value of centred) power += value * value;
  const shortest = Math.floor((60 / TEMPO_BPM.fastest) * rate);
  const longest = Math.ceil((60 / TEMPO_BPM.slowest) * rate);
  // Two beats at the slowest tempo at least, so the autocorrelation has something to compare.
  if (power <= 0 || n < 2 * longest) return null;
  const correlation = new Float32Array(longest + 2);
  for (let lag = shortest - 1; lag <= longest + 1; lag++) {
    let sum = 0;
    for (let i = 0; i + lag < n; i++) sum += centred[i]! * centred[i + lag]!;
    correlation[lag] = sum / power;
  }
  let best = -1;
  let bestScore = -Infinity;
  for (let lag = shortest; lag <= longest; lag++) {
    const bpm = (60 * rate) / lag;
    const prior = Math.exp(-0.5 * (Math.log2(bpm / TEMPO_BPM.preferred) / TEMPO_BPM.octaves) ** 2);
    const score = correlation[lag]! * prior;
    if (score > bestScore) [best, bestScore] = [lag, score];
  }
  if (bestScore < MIN_PULSE) return null;

  // The period to a tenth of a hop and the phase to a hop, together: the grid with the strongest onsets.
  let period = best;
  let phase = 0;
  let strongest = -Infinity;
  for (let candidate = best - 1; candidate <= best + 1 + 1e-9; candidate += 0.1) {
    for (let start = 0; start < candidate; start++) {
      const strength = gridStrength(onset, candidate, start);
      if (strength > strongest) [period, phase, strongest] = [candidate, start, strength];
    }
  }

  if (strongest < MIN_BEAT_RISE_DB) return null;
  const reach = Math.max(1, Math.round(SNAP_SHARE * period));
  const beatHops: number[] = [];
  // The phase is the first beat after the song's first hop, whose onset is unknown: a beat may fall on it.
  for (let t = phase - period >= -reach ? phase - period : phase; t < n; ) {
    let peak = Math.round(t);
    for (let i = Math.max(0, Math.round(t) - reach); i <= Math.min(n - 1, Math.round(t) + reach); i++) if (onset[i]! > onset[peak]!) peak = i;
    const at = onset[peak]! > mean ? t + (peak - t) / 2 : t;
    beatHops.push(Math.max(0, at));
    t = at + period;
  }
  const strengthOf = (k: number) => low[Math.min(n - 1, Math.round(beatHops[k]!))]!;
  const byPhase = Array.from({ length: BEATS_A_BAR }, (_, p) => beatHops.reduce((sum, _, k) => sum + (k % BEATS_A_BAR === p ? strengthOf(k) : 0), 0));
  const first = byPhase.indexOf(Math.max(...byPhase));
  const times = beatHops.map((h) => h / rate);
  return { tempoBpm: (60 * rate) / period, times, downbeats: times.filter((_, k) => k % BEATS_A_BAR === first) };
}
