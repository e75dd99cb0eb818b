import { DELIVERY_AUDIO_ENCODING, DELIVERY_AUDIO_SAMPLE_RATE, DELIVERY_LOUDNESS } from '@petsing/workflows/media';
import { MAX_AUDIO_SECONDS } from '@petsing/workflows/api-rules';
import { MediaToolError, runFfmpegForLog } from './ffmpeg.ts';

/**
 * Writes an audio's prepared copies at a measured loudness (docs/decisions.md, "Delivery audio"). A first ffmpeg run
 * measures the source as each copy will hear it (EBU R128 integrated loudness and peak, ffmpeg's ebur128 filter); a
 * second writes each copy with the gain that brings it to its target, and a limiter only where that gain would lift a
 * peak over the copy's ceiling; the delivery copy, once encoded, is measured again and written again (at most twice) if
 * it missed.
 *
 * Not ffmpeg's loudnorm: on an input under 3 s (ffmpeg 5.1) it switches to a "linear" mode whose gain, when the full
 * gain would push the peak over its limit, is the limit minus the peak as amplitudes rather than their ratio: a 2.9 s
 * clip at −40 LUFS came out at −43 LUFS instead of −16, and longer clips go through its dynamic compressor.
 */

/** What ebur128 measured: integrated loudness (null: nothing above its −70 LUFS gate, i.e. silence) and peak in dBFS. */
interface Loudness {
  integratedLufs: number | null;
  peakDb: number;
}

/** One prepared copy: how it is formatted, how loud it is made, and how it is encoded. */
interface Copy {
  /** Names its meter in ffmpeg's log. */
  label: string;
  sampleRate: number;
  layout: 'mono' | 'stereo';
  targetLufs: number;
  /** The true peak its limiter holds it under, in dB (Infinity: no limiter). */
  ceilingDb: number;
  /** Peaks are measured between samples too. */
  truePeak: boolean;
  encoding: readonly string[];
}

/**
 * The delivery copy: stereo (a mono source on both channels), 48 kHz, AAC. Its limiter holds true peaks 1 dB under
 * the allowed −1 dBTP, the room AAC's own overshoot takes on ordinary material; a miss is corrected after measuring.
 */
const DELIVERY: Copy = {
  label: 'delivery',
  sampleRate: DELIVERY_AUDIO_SAMPLE_RATE,
  layout: 'stereo',
  targetLufs: DELIVERY_LOUDNESS.integratedLufs,
  ceilingDb: DELIVERY_LOUDNESS.truePeakDbtp - 1,
  truePeak: true,
  encoding: [...DELIVERY_AUDIO_ENCODING, '-movflags', '+faststart', '-f', 'mp4'],
};

/**
 * The analysis copy the render node listens to: mono 16 kHz (the mel recipe's rate) WAV at a steady loudness. Its
 * samples are floats, which a peak over full scale does not clip, so it needs no limiter and lands on its target.
 */
const ANALYSIS: Copy = {
  label: 'analysis',
  sampleRate: 16_000,
  layout: 'mono',
  targetLufs: -16,
  ceilingDb: Infinity,
  truePeak: false,
  encoding: ['-c:a', 'pcm_f32le', '-f', 'wav'],
};

/** ebur128 gates at −70 LUFS: a reading there means nothing was loud enough to measure. */
const SILENT_LUFS = -70;
/** A quiet recording is raised by at most this much: more would turn its room noise into hiss. */
const MAX_GAIN_DB = 30;
/** How far the delivery copy may land from its target before it is written again. */
const TOLERANCE_LU = 0.5;
/** How far under the limit a delivery copy whose encoded true peak went over it is put. */
const PEAK_MARGIN_DB = 0.5;
/** Writes of the delivery copy at most (the first and its corrections). */
const MAX_DELIVERY_WRITES = 3;
/** True peaks are limited at this multiple of the copy's rate, where the peaks between samples show. */
const TRUE_PEAK_OVERSAMPLING = 4;
/** The limiter's look-ahead and recovery (ms): quick enough to catch a drum hit, slow enough not to distort a bass note. */
const LIMITER = { attack: 5, release: 80 };

/** How one copy is written: its gain, and the ceiling of its limiter where it has one. */
interface Level {
  gainDb: number;
  ceilingDb: number;
  limit: boolean;
}

export interface AudioCopies {
  /** The analysis WAV's path. */
  analysis?: string;
  /** The delivery M4A's path. */
  delivery?: string;
}

/** Where a preparation's time went (ms): measuring the source, writing the copies, measuring the written soundtrack. */
export interface CopiesReport {
  measureMs: number;
  writeMs: number;
  checkMs: number;
  /** How many times the soundtrack was written (1: it landed at once). */
  deliveryWrites: number;
}

/** Writes the asked-for copies of `source` (its first audio stream, at most MAX_AUDIO_SECONDS) at their measured loudness. */
export async function writeAudioCopies(source: string, paths: AudioCopies, signal?: AbortSignal): Promise<CopiesReport> {
  const report: CopiesReport = { measureMs: 0, writeMs: 0, checkMs: 0, deliveryWrites: 0 };
  const timed = async <T>(stage: 'measureMs' | 'writeMs' | 'checkMs', step: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    try {
      return await step();
    } finally {
      report[stage] += performance.now() - started;
    }
  };
  const copies = [...(paths.analysis ? [{ copy: ANALYSIS, path: paths.analysis }] : []), ...(paths.delivery ? [{ copy: DELIVERY, path: paths.delivery }] : [])];
  if (copies.length === 0) return report;
  const measured = await timed('measureMs', () => measureCopies(source, copies.map(({ copy }) => copy), signal));
  const levels = copies.map(({ copy }) => levelFor(copy, measured.get(copy.label)!));
  await timed('writeMs', () => writeCopies(source, copies.map(({ copy, path }, i) => ({ copy, path, level: levels[i]! })), signal));
  if (!paths.delivery) return report;

  const delivery = paths.delivery;
  let level = levels.at(-1)!;
  for (report.deliveryWrites = 1; report.deliveryWrites < MAX_DELIVERY_WRITES; report.deliveryWrites++) {
    const corrected = correction(level, await timed('checkMs', () => measureFile(delivery, true, signal)), report.deliveryWrites + 1 === MAX_DELIVERY_WRITES);
    if (!corrected) break;
    level = corrected;
    await timed('writeMs', () => writeCopies(source, [{ copy: DELIVERY, path: delivery, level }], signal));
  }
  return report;
}

/** Measures an audio file as it is (the first audio stream); `truePeak` reads the peak between samples too. */
async function measureFile(path: string, truePeak: boolean, signal?: AbortSignal): Promise<Loudness> {
  const log = await runFfmpegForLog(['-nostdin', '-hide_banner', '-nostats', '-v', 'info', '-i', path, '-filter_complex', `[0:a:0]${meter('file', truePeak)}[m]`, '-map', '[m]', '-f', 'null', '-'], signal);
  return readMeters(log).get('file')!;
}

/** One ffmpeg run: the source split, each branch formatted as its copy and metered. */
async function measureCopies(source: string, copies: Copy[], signal?: AbortSignal): Promise<Map<string, Loudness>> {
  const graph = splitGraph(copies.map((copy) => [...formatFilters(copy), meter(copy.label, copy.truePeak)]));
  const log = await runFfmpegForLog([...readSource(source, '-v', 'info'), '-filter_complex', graph, ...copies.flatMap((_, i) => ['-map', `[out${i}]`, '-f', 'null', '-'])], signal);
  const measured = readMeters(log);
  const missing = copies.find((copy) => !measured.has(copy.label));
  if (missing) throw new MediaToolError(`ffmpeg reported no loudness for the ${missing.label} copy`, log);
  return measured;
}

async function writeCopies(source: string, copies: { copy: Copy; path: string; level: Level }[], signal?: AbortSignal): Promise<void> {
  const graph = splitGraph(copies.map(({ copy, level }) => [...formatFilters(copy), ...levelFilters(copy, level)]));
  await runFfmpegForLog([...readSource(source, '-v', 'error'), '-filter_complex', graph, ...copies.flatMap(({ copy, path }, i) => ['-map', `[out${i}]`, ...copy.encoding, path])], signal);
}

/** The first audio stream of `source`, cut at the longest audio a video takes. */
function readSource(source: string, ...logLevel: string[]): string[] {
  return ['-nostdin', '-hide_banner', '-nostats', ...logLevel, '-y', '-t', String(MAX_AUDIO_SECONDS), '-i', source, '-vn'];
}

/** The source's first audio stream split into one labelled branch per chain of filters (`[out0]`, `[out1]`…). */
function splitGraph(chains: string[][]): string {
  if (chains.length === 1) return `[0:a:0]${chains[0]!.join(',')}[out0]`;
  const split = `[0:a:0]asplit=${chains.length}${chains.map((_, i) => `[in${i}]`).join('')}`;
  return [split, ...chains.map((chain, i) => `[in${i}]${chain.join(',')}[out${i}]`)].join(';');
}

function formatFilters(copy: Copy): string[] {
  return [`aresample=${copy.sampleRate}`, `aformat=sample_fmts=flt:channel_layouts=${copy.layout}`];
}

/** An ebur128 filter reporting under `label`; its per-frame lines go to the verbose level, its summary to info. */
function meter(label: string, truePeak: boolean): string {
  return `ebur128@${label}=peak=${truePeak ? 'true' : 'sample'}:framelog=verbose`;
}

/** Reads the summary each labelled ebur128 filter printed as its ffmpeg run ended. */
function readMeters(log: string): Map<string, Loudness> {
  const meters = new Map<string, Loudness>();
  const summary = /\[ebur128@(\w+) @ [^\]]+\] Summary:[\s\S]*?\bI:\s+(-?[\d.]+) LUFS[\s\S]*?\bPeak:\s+(-?[\d.]+|-inf) dBFS/g;
  for (const [, label, integrated, peak] of log.matchAll(summary)) {
    const lufs = Number(integrated);
    meters.set(label!, { integratedLufs: lufs <= SILENT_LUFS ? null : lufs, peakDb: peak === '-inf' ? -Infinity : Number(peak) });
  }
  return meters;
}

/** The gain that brings the copy to its target (none for silence, at most MAX_GAIN_DB), under its usual ceiling. */
function levelFor(copy: Copy, measured: Loudness): Level {
  const gainDb = measured.integratedLufs === null ? 0 : Math.min(MAX_GAIN_DB, copy.targetLufs - measured.integratedLufs);
  return { gainDb, ceilingDb: copy.ceilingDb, limit: measured.peakDb + gainDb > copy.ceilingDb };
}

/** The filters giving the copy its level: the gain, then (where needed) the limiter, at 4× the rate so that it holds true peaks. */
function levelFilters(copy: Copy, level: Level): string[] {
  const gain = `volume=${level.gainDb.toFixed(2)}dB`;
  if (!level.limit) return [gain];
  const limiter = `alimiter=limit=${(10 ** (level.ceilingDb / 20)).toFixed(5)}:attack=${LIMITER.attack}:release=${LIMITER.release}:level=false:latency=true`;
  return [gain, `aresample=${copy.sampleRate * TRUE_PEAK_OVERSAMPLING}`, limiter, `aresample=${copy.sampleRate}`];
}

/**
 * The delivery copy's next level when its encoded file missed; undefined: it landed. A true peak over the limit
 * scales the whole copy down (gain and limiter ceiling alike, so the limiter acts as before) by the overshoot and
 * PEAK_MARGIN_DB: the encoder's overshoot scales with it. Otherwise a loudness off by more than TOLERANCE_LU moves the
 * gain by the difference (at most to MAX_GAIN_DB), unless this is the `last` write, which nothing measures after it:
 * a raise could lift a peak over the limit unseen.
 */
function correction(level: Level, encoded: Loudness, last: boolean): Level | undefined {
  if (encoded.integratedLufs === null) return undefined;
  const overshoot = encoded.peakDb - DELIVERY_LOUDNESS.truePeakDbtp;
  if (overshoot > 0) {
    const down = overshoot + PEAK_MARGIN_DB;
    return { ...level, gainDb: level.gainDb - down, ceilingDb: level.ceilingDb - down };
  }
  const short = DELIVERY.targetLufs - encoded.integratedLufs;
  const raise = Math.abs(short) > TOLERANCE_LU && !last ? Math.min(short, MAX_GAIN_DB - level.gainDb) : 0;
  if (raise === 0) return undefined;
  // A limiter once needed stays; otherwise the file's peak, raised with the gain, says whether one is needed now.
  return { gainDb: level.gainDb + raise, ceilingDb: level.ceilingDb, limit: level.limit || encoded.peakDb + raise > level.ceilingDb };
}
