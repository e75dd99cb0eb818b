import { createHash } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { encodeOnnxModel, floatTensor, int64Tensor, type OnnxModel } from './onnx-writer.ts';

/**
 * The bundled lip-sync model: a small hand-built ONNX graph with the Wav2Lip contract.
 * It is not a neural network; it draws an open mouth whose height follows the loudness
 * of the mel window, so the whole pipeline (contract, batching, compositing, encoding)
 * is exercised with a model anyone may ship, and a real export can replace it unchanged.
 *
 *   loudness = weighted mean over the 16 columns of (max over the 80 mel bands)
 *   open     = clip((loudness - SILENCE_LEVEL) * GAIN, 0, 1)          -- 0 on silence (all -4)
 *   inside   = open² · (1 - x²) - (y - open)²                          -- ellipse hanging from the upper lip
 *   mask     = clip(inside · EDGE_SHARPNESS, 0, 1)
 *   output   = reference + mask · (0.2 · reference + MOUTH_COLOUR - reference)
 * where x, y are crop coordinates normalised to the mouth's half-width and half-height.
 */

export const GENERATED_MODEL_VERSION = 'petsing-lipsync-sim-v1';
const DEFAULT_FACE_SIZE = 96;

/** Normalised mel value (-4..4) below which the mouth stays shut; -4 is digital silence, about -2.5 is a quiet room. */
const SILENCE_LEVEL = -2.0;
/** Full opening at about +1.5, a loud sung vowel. */
const GAIN = 1 / 3.5;
const EDGE_SHARPNESS = 14;
/** Mouth position inside the crop, as fractions of S: where the upper lip sits and the mouth's half-size. */
export const MOUTH_GEOMETRY = { centreX: 0.5, upperLipY: 0.7, halfWidth: 0.17, halfHeight: 0.09 } as const;
// BGR, like every tensor of the contract (Wav2Lip feeds OpenCV frames): a dark red mouth interior.
const MOUTH_COLOUR = [0.05, 0.04, 0.2];

export interface GeneratedModelOptions {
  faceSize?: number;
}

export function buildLipSyncModel(options: GeneratedModelOptions = {}): Buffer {
  const size = options.faceSize ?? DEFAULT_FACE_SIZE;
  const { centreX, upperLipY, halfWidth, halfHeight } = MOUTH_GEOMETRY;

  const widthTerm = new Float32Array(size * size);
  const heightCoord = new Float32Array(size * size);
  for (let row = 0; row < size; row++) {
    for (let col = 0; col < size; col++) {
      const x = ((col + 0.5) / size - centreX) / halfWidth;
      const y = ((row + 0.5) / size - upperLipY) / halfHeight;
      widthTerm[row * size + col] = 1 - x * x;
      heightCoord[row * size + col] = y;
    }
  }
  // Weight the first half of the 200 ms window most: it is the audio under the current frame.
  const timeWeights = Array.from({ length: 16 }, (_, j) => Math.exp(-(((j - 4) / 5) ** 2)));
  const weightMean = timeWeights.reduce((a, b) => a + b, 0) / 16;

  const model: OnnxModel = {
    graphName: 'lipsync_sim',
    producer: 'petsing-render-node',
    opset: 13,
    docString: 'Deterministic stand-in lip-sync model with the Wav2Lip interface (see render-node/README.md).',
    metadata: { model_version: GENERATED_MODEL_VERSION, contract: 'wav2lip', face_size: String(size), licence: 'same as petsing' },
    inputs: [
      { name: 'audio_sequences', shape: ['N', 1, 80, 16] },
      { name: 'face_sequences', shape: ['N', 6, size, size] },
    ],
    outputs: [{ name: 'generated', shape: ['N', 3, size, size] }],
    initializers: [
      floatTensor('time_weights', [1, 1, 1, 16], timeWeights.map((w) => w / weightMean)),
      floatTensor('silence_level', [], [SILENCE_LEVEL]),
      floatTensor('gain', [], [GAIN]),
      floatTensor('zero', [], [0]),
      floatTensor('one', [], [1]),
      floatTensor('edge_sharpness', [], [EDGE_SHARPNESS]),
      floatTensor('width_term', [1, 1, size, size], widthTerm),
      floatTensor('height_coord', [1, 1, size, size], heightCoord),
      floatTensor('interior_keep', [], [0.2]),
      floatTensor('mouth_colour', [1, 3, 1, 1], MOUTH_COLOUR),
      int64Tensor('ref_start', [3]),
      int64Tensor('ref_end', [6]),
      int64Tensor('channel_axis', [1]),
    ],
    nodes: [
      { op: 'ReduceMax', inputs: ['audio_sequences'], outputs: ['band_max'], attributes: [{ name: 'axes', kind: 'ints', value: [2] }, { name: 'keepdims', kind: 'int', value: 1 }] },
      { op: 'Mul', inputs: ['band_max', 'time_weights'], outputs: ['weighted'] },
      { op: 'ReduceMean', inputs: ['weighted'], outputs: ['loudness'], attributes: [{ name: 'axes', kind: 'ints', value: [3] }, { name: 'keepdims', kind: 'int', value: 1 }] },
      { op: 'Sub', inputs: ['loudness', 'silence_level'], outputs: ['above_silence'] },
      { op: 'Mul', inputs: ['above_silence', 'gain'], outputs: ['open_raw'] },
      { op: 'Clip', inputs: ['open_raw', 'zero', 'one'], outputs: ['open'] },
      { op: 'Mul', inputs: ['open', 'open'], outputs: ['open_sq'] },
      { op: 'Mul', inputs: ['open_sq', 'width_term'], outputs: ['width_part'] },
      { op: 'Sub', inputs: ['height_coord', 'open'], outputs: ['dy'] },
      { op: 'Mul', inputs: ['dy', 'dy'], outputs: ['dy_sq'] },
      { op: 'Sub', inputs: ['width_part', 'dy_sq'], outputs: ['inside'] },
      { op: 'Mul', inputs: ['inside', 'edge_sharpness'], outputs: ['inside_sharp'] },
      { op: 'Clip', inputs: ['inside_sharp', 'zero', 'one'], outputs: ['mask'] },
      { op: 'Slice', inputs: ['face_sequences', 'ref_start', 'ref_end', 'channel_axis'], outputs: ['reference'] },
      { op: 'Mul', inputs: ['reference', 'interior_keep'], outputs: ['shaded'] },
      { op: 'Add', inputs: ['shaded', 'mouth_colour'], outputs: ['interior'] },
      { op: 'Sub', inputs: ['interior', 'reference'], outputs: ['change'] },
      { op: 'Mul', inputs: ['mask', 'change'], outputs: ['masked_change'] },
      { op: 'Add', inputs: ['reference', 'masked_change'], outputs: ['generated'] },
    ],
  };
  return encodeOnnxModel(model);
}

function defaultModelCacheDir(): string {
  const base = process.env.XDG_CACHE_HOME || (homedir() ? join(homedir(), '.cache') : tmpdir());
  return join(base, 'petsing', 'render-node');
}

/**
 * Writes the generated model into the cache (once; the bytes are deterministic, so an existing
 * file with the right hash is reused) and returns its path.
 */
export async function ensureGeneratedModel(options: GeneratedModelOptions & { cacheDir?: string } = {}): Promise<string> {
  const bytes = buildLipSyncModel(options);
  const digest = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
  const dir = options.cacheDir ?? defaultModelCacheDir();
  const path = join(dir, `${GENERATED_MODEL_VERSION}-s${options.faceSize ?? DEFAULT_FACE_SIZE}-${digest}.onnx`);
  const existing = await readFile(path).catch(() => undefined);
  if (existing && existing.equals(bytes)) return path;
  await mkdir(dir, { recursive: true });
  // Write then rename so a concurrent reader never sees half a model.
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, bytes);
  await rename(temporary, path);
  return path;
}
