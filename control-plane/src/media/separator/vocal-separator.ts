import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { inverseStft, stereoStft, type StereoSpectrum } from './stft.ts';

/**
 * The vocal separator: Spleeter's 2-stem model (control-plane/models/README.md, the model card), converted to ONNX by
 * `npm run build:separator`. The file answers a vocal mask for the magnitudes of a 44.1 kHz stereo STFT; this module
 * does the rest of Spleeter's recipe around it.
 */
export const BUNDLED_SEPARATOR_MODEL = join(import.meta.dirname, '../../../models/vocal-separator.onnx');
/** The sha256 of the committed file, printed by `npm run build:separator`: any other file refuses the start. */
export const SEPARATOR_MODEL_SHA256 = '1389084b11cf3331e1e8fa82b121e9f804a52a2f5adef737c26d6b3de4dc16cd';
/** What the stems' object keys carry, so a new model or recipe never reuses stems of an older one. */
export const SEPARATOR_VERSION = `spleeter2-${SEPARATOR_MODEL_SHA256.slice(0, 12)}`;

/** Spleeter's recipe (its 2stems.json): the model sees 44.1 kHz stereo, the lowest 1024 bins, 512-frame segments. */
export const SEPARATOR_SAMPLE_RATE = 44_100;
const BINS = 1024;
const SEGMENT_FRAMES = 512;
/** Six stride-2 levels: a segment's frames must be a multiple of 2⁶ (the last is zero-padded to one, not to 512). */
const FRAME_MULTIPLE = 64;

/** A separator model that is not the expected file: the control worker does not start. */
export class SeparatorModelError extends Error {
  constructor(readonly path: string, readonly expectedSha256: string, readonly problem: string) {
    super(
      `The vocal separator model ${path} ${problem}; expected sha256 ${expectedSha256}. `
        + 'Restore it from the repository (control-plane/models/vocal-separator.onnx) or rebuild it with npm run build:separator.',
    );
    this.name = 'SeparatorModelError';
  }
}

export type SeparatorProvider = 'cpu' | 'cuda';

export interface SeparatorOptions {
  /** Default: the bundled file. It must have SEPARATOR_MODEL_SHA256 (`expectedSha256` exists for tests and benches). */
  path?: string;
  expectedSha256?: string;
  provider?: SeparatorProvider;
  /** When CUDA cannot load: run on the CPU (warned) or refuse, as the render node's RENDER_CUDA_FALLBACK. */
  cudaFallback?: 'cpu' | 'refuse';
  /** onnxruntime's intra-op threads; default: all cores. */
  threads?: number;
  graphOptimization?: 'basic' | 'extended' | 'all';
  /**
   * onnxruntime's threads wait for work spinning (its own default) or, by default here, sleeping: spinning cost 30% more
   * CPU for the same work on 2 cores (`npm run bench:separate`), and the control worker shares its machine.
   */
  spinning?: boolean;
  /** Frames per model run: Spleeter's 512 (11.9 s); a multiple of 64 (`npm run bench:separate` compares 256). */
  segmentFrames?: number;
  warn?: (message: string, details: Record<string, unknown>) => void;
}

/** Mono stems at 44.1 kHz, as long as the input; vocals + accompaniment = the mix's mono downmix. */
export interface Stems {
  vocals: Float32Array;
  accompaniment: Float32Array;
}

/** Reads the model file and checks its sha256; throws SeparatorModelError naming the path and the expected hash. */
export async function readSeparatorModel(path = BUNDLED_SEPARATOR_MODEL, expectedSha256 = SEPARATOR_MODEL_SHA256): Promise<Uint8Array> {
  let bytes: Buffer;
  try {
    bytes = await readFile(path);
  } catch (error) {
    throw new SeparatorModelError(path, expectedSha256, `cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`);
  }
  const found = createHash('sha256').update(bytes).digest('hex');
  if (found !== expectedSha256) throw new SeparatorModelError(path, expectedSha256, `has sha256 ${found} (${bytes.length} bytes)`);
  return bytes;
}

export class VocalSeparator {
  /** One separation at a time: each already uses every core onnxruntime is given. */
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly session: ort.InferenceSession,
    readonly provider: SeparatorProvider,
    private readonly segmentFrames: number,
  ) {}

  /** Checks the file's hash, then creates the onnxruntime session (CUDA first when asked, with the fallback rule). */
  static async load(options: SeparatorOptions = {}): Promise<VocalSeparator> {
    const bytes = await readSeparatorModel(options.path, options.expectedSha256);
    const settings = (providers: ort.InferenceSession.ExecutionProviderConfig[]): ort.InferenceSession.SessionOptions => ({
      executionProviders: providers,
      graphOptimizationLevel: options.graphOptimization ?? 'all',
      logSeverityLevel: 3,
      ...(options.threads ? { intraOpNumThreads: options.threads } : {}),
      ...(options.spinning ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
    });
    const segmentFrames = options.segmentFrames ?? SEGMENT_FRAMES;
    if (!(segmentFrames > 0 && segmentFrames % FRAME_MULTIPLE === 0)) throw new RangeError(`segmentFrames must be a positive multiple of ${FRAME_MULTIPLE}`);
    if (options.provider === 'cuda') {
      try {
        return new VocalSeparator(await ort.InferenceSession.create(bytes, settings([{ name: 'cuda', deviceId: 0 }, 'cpu'])), 'cuda', segmentFrames);
      } catch (error) {
        if (options.cudaFallback !== 'cpu') throw new Error(`The vocal separator could not load CUDA: ${(error as Error).message}`, { cause: error });
        options.warn?.('CUDA unavailable for the vocal separator; running it on the CPU', { reason: (error as Error).message });
      }
    }
    return new VocalSeparator(await ort.InferenceSession.create(bytes, settings(['cpu'])), 'cpu', segmentFrames);
  }

  /** Separates a 44.1 kHz stereo mix (equal-length channels) into mono vocals and accompaniment. */
  separate(left: Float32Array, right: Float32Array): Promise<Stems> {
    const run = this.queue.then(() => this.separateNow(left, right));
    this.queue = run.catch(() => undefined);
    return run;
  }

  release(): Promise<void> {
    return this.session.release();
  }

  private async separateNow(left: Float32Array, right: Float32Array): Promise<Stems> {
    const spectrum = stereoStft(left, right, BINS);
    const { frames } = spectrum;
    // The vocals' mono spectrum: each channel's STFT times its mask, averaged; zero above BINS (Spleeter's mask extension).
    const vocalRe = new Float32Array(frames * BINS);
    const vocalIm = new Float32Array(frames * BINS);
    for (let start = 0; start < frames; start += this.segmentFrames) {
      const length = Math.min(this.segmentFrames, frames - start);
      const padded = Math.ceil(length / FRAME_MULTIPLE) * FRAME_MULTIPLE;
      const magnitude = segmentMagnitude(spectrum, start, length, padded);
      const output = await this.session.run({ magnitude: new ort.Tensor('float32', magnitude, [1, 2, padded, BINS]) });
      const mask = output.vocal_mask!.data as Float32Array;
      applyMask(spectrum, mask, start, length, padded, vocalRe, vocalIm);
    }
    const vocals = inverseStft(vocalRe, vocalIm, frames, BINS, left.length);
    const accompaniment = new Float32Array(left.length);
    for (let i = 0; i < left.length; i++) accompaniment[i] = (left[i]! + right[i]!) / 2 - vocals[i]!;
    return { vocals, accompaniment };
  }
}

/** The model's input for frames [start, start + length): [1, channel, frame, bin] magnitudes, zero-padded to `padded` frames. */
function segmentMagnitude(spectrum: StereoSpectrum, start: number, length: number, padded: number): Float32Array {
  const magnitude = new Float32Array(2 * padded * BINS);
  const channels = [[spectrum.leftRe, spectrum.leftIm], [spectrum.rightRe, spectrum.rightIm]] as const;
  channels.forEach(([re, im], channel) => {
    const base = channel * padded * BINS;
    for (let t = 0; t < length; t++) {
      const from = (start + t) * BINS;
      const to = base + t * BINS;
      for (let f = 0; f < BINS; f++) magnitude[to + f] = Math.hypot(re[from + f]!, im[from + f]!);
    }
  });
  return magnitude;
}

/** Adds the masked channels' mean for frames [start, start + length) into the vocals' spectrum. */
function applyMask(spectrum: StereoSpectrum, mask: Float32Array, start: number, length: number, padded: number, re: Float32Array, im: Float32Array): void {
  const right = padded * BINS;
  for (let t = 0; t < length; t++) {
    const at = (start + t) * BINS;
    const row = t * BINS;
    for (let f = 0; f < BINS; f++) {
      const left = mask[row + f]! / 2;
      const rightMask = mask[right + row + f]! / 2;
      re[at + f] = left * spectrum.leftRe[at + f]! + rightMask * spectrum.rightRe[at + f]!;
      im[at + f] = left * spectrum.leftIm[at + f]! + rightMask * spectrum.rightIm[at + f]!;
    }
  }
}
