import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import sharp from 'sharp';
import { z } from 'zod';
import { FaceView, PetSpecies } from '@petsing/workflows';
import { RenderError } from './errors.ts';
import type { RgbImage } from './image-decoder.ts';
import { silentLogger, type Logger } from './logger.ts';
import { readOnnxMetadata } from './onnx-metadata.ts';
import { createSession, warmUp, type ExecutionProvider } from './onnx-session.ts';
import { DetectionFailure, eyeMidpoint, faceLength, headAround, type FaceDetector, type PetFace, type Point } from './pet-face.ts';

/** The project's own pet-face model (render-node/models/README.md, the model card). */
export const BUNDLED_FACE_MODEL = {
  detector: join(import.meta.dirname, '../models/petface-detector.onnx'),
  landmarks: join(import.meta.dirname, '../models/petface-landmarks.onnx'),
};

/** A turned copy for the detector is made this small first. */
const DETECTOR_COPY_SIDE = 512;
/** Face centres the landmark model may try, and how strong a heatmap peak must be (a share of the strongest) to be one. */
const CANDIDATES = 3;
const CANDIDATE_SHARE = 0.1;
/** Face lengths (eye midpoint to chin, as shares of the photo's longer side) tried around a given mouth when no face was found. */
const AROUND_LENGTHS = [0.05, 0.1, 0.2, 0.4];
/**
 * Landmark passes: each after the first crops around the previous pass's points, which corrects a detector's
 * rough frame (a turned head's most of all).
 */
const LANDMARK_PASSES = 3;

const csv = z.string().transform((text) => text.split(','));
const number = z.coerce.number().positive();
const share = z.coerce.number().min(0).max(1);

/** How each file wants its input and names its outputs: written into the ONNX metadata at export (training/petface/export.py). */
const DetectorMetadata = z.object({
  petsing_face_stage: z.literal('detector'),
  input_side: number,
  stride: number,
  offset_unit: number,
  classes: csv,
  fill: z.coerce.number(),
  /** The photo holds a supported pet when 1 − p(none) reaches this (chosen on the held-out split: the model card). */
  min_pet_probability: share,
  model_version: z.string(),
});
const LandmarkMetadata = z.object({
  petsing_face_stage: z.literal('landmarks'),
  input_side: number,
  stride: number,
  crop_side_in_radii: number,
  min_radius: number,
  peak_window: z.coerce.number().int().min(0),
  landmarks: csv,
  views: csv,
  species: csv,
  attributes: csv,
  fill: z.coerce.number(),
  /** A crop holds a pet's face when its face score reaches this. */
  min_face_score: share,
  model_version: z.string(),
});

type Affine = [number, number, number, number, number, number]; // x' = a x + b y + c, y' = d x + e y + f

const apply = (m: Affine, [x, y]: Point): Point => [m[0] * x + m[1] * y + m[2], m[3] * x + m[4] * y + m[5]];

function invert(m: Affine): Affine {
  const det = m[0] * m[4] - m[1] * m[3];
  const a = m[4] / det;
  const b = -m[1] / det;
  const d = -m[3] / det;
  const e = m[0] / det;
  return [a, b, -(a * m[2] + b * m[5]), d, e, -(d * m[2] + e * m[5])];
}

/** The four points that place a face: the eyes' midpoint, nose, mouth and chin. */
type KeyPoints = [Point, Point, Point, Point];

/**
 * The canonical face crop (the same as training/petface/dataset.py's face_frame and crop_matrix): a square
 * around the key points, `radii` face radii across, rotated so that the face's axis (from the eyes' midpoint
 * to mouth and chin) points down. Returns the map from photo pixels to crop pixels.
 */
function cropMatrix(key: KeyPoints, side: number, radii: number, minRadius: number): Affine {
  const xs = key.map((p) => p[0]);
  const ys = key.map((p) => p[1]);
  const centre: Point = [(Math.min(...xs) + Math.max(...xs)) / 2, (Math.min(...ys) + Math.max(...ys)) / 2];
  const radius = Math.max(minRadius, ...key.map((p) => Math.hypot(p[0] - centre[0], p[1] - centre[1])));
  const [eyeMid, , mouth, chin] = key;
  const angle = Math.atan2((mouth[0] + chin[0]) / 2 - eyeMid[0], (mouth[1] + chin[1]) / 2 - eyeMid[1]);
  const k = side / (radii * radius);
  const c = Math.cos(angle) * k;
  const s = Math.sin(angle) * k;
  return [c, -s, side / 2 - (c * centre[0] - s * centre[1]), s, c, side / 2 - (s * centre[0] + c * centre[1])];
}

/**
 * Samples `image` through `toOutput` (image pixels → output pixels) into a 3×side×side float tensor (RGB 0-1).
 * A large shrink is first done by libvips over the region concerned, so the bilinear sampling never aliases.
 */
async function sampleCrop(image: RgbImage, toOutput: Affine, side: number, fill: number): Promise<Float32Array> {
  const toImage = invert(toOutput);
  const corners = [apply(toImage, [0, 0]), apply(toImage, [side, 0]), apply(toImage, [0, side]), apply(toImage, [side, side])];
  const left = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[0]))) - 1);
  const top = Math.max(0, Math.floor(Math.min(...corners.map((p) => p[1]))) - 1);
  const right = Math.min(image.width, Math.ceil(Math.max(...corners.map((p) => p[0]))) + 1);
  const bottom = Math.min(image.height, Math.ceil(Math.max(...corners.map((p) => p[1]))) + 1);
  const out = new Float32Array(3 * side * side).fill(fill / 255);
  if (right - left < 2 || bottom - top < 2) return out;
  const zoom = Math.sqrt(Math.abs(toOutput[0] * toOutput[4] - toOutput[1] * toOutput[3]));
  const shrink = zoom < 0.5 ? Math.floor(1 / zoom) : 1;
  const width = Math.max(2, Math.round((right - left) / shrink));
  const height = Math.max(2, Math.round((bottom - top) / shrink));
  const { data } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .extract({ left, top, width: right - left, height: bottom - top })
    .resize(width, height, { fit: 'fill', kernel: 'linear' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  // Output pixel centre → region pixel coordinates (continuous, pixel i spanning [i, i+1]).
  const sx = width / (right - left);
  const sy = height / (bottom - top);
  const plane = side * side;
  for (let v = 0; v < side; v++) {
    for (let u = 0; u < side; u++) {
      const [ix, iy] = apply(toImage, [u + 0.5, v + 0.5]);
      const x = (ix - left) * sx - 0.5;
      const y = (iy - top) * sy - 0.5;
      if (x < -0.5 || y < -0.5 || x > width - 0.5 || y > height - 0.5) continue;
      const x0 = Math.max(0, Math.min(width - 1, Math.floor(x)));
      const y0 = Math.max(0, Math.min(height - 1, Math.floor(y)));
      const x1 = Math.min(width - 1, x0 + 1);
      const y1 = Math.min(height - 1, y0 + 1);
      const fx = Math.max(0, Math.min(1, x - x0));
      const fy = Math.max(0, Math.min(1, y - y0));
      for (let c = 0; c < 3; c++) {
        const p00 = data[(y0 * width + x0) * 3 + c]!;
        const p10 = data[(y0 * width + x1) * 3 + c]!;
        const p01 = data[(y1 * width + x0) * 3 + c]!;
        const p11 = data[(y1 * width + x1) * 3 + c]!;
        const top0 = p00 + (p10 - p00) * fx;
        const bottom0 = p01 + (p11 - p01) * fx;
        out[c * plane + v * side + u] = (top0 + (bottom0 - top0) * fy) / 255;
      }
    }
  }
  return out;
}

/** The heatmap's maximum refined by the softmax weights of its neighbourhood, in input pixels (training/petface/pipeline.py's peak). */
function peak(map: Float32Array, offset: number, size: number, stride: number, window: number): Point {
  let best = offset;
  for (let i = offset; i < offset + size * size; i++) if (map[i]! > map[best]!) best = i;
  const j = Math.floor((best - offset) / size);
  const i = (best - offset) % size;
  const top = map[best]!;
  let sum = 0;
  let x = 0;
  let y = 0;
  for (let yy = Math.max(0, j - window); yy <= Math.min(size - 1, j + window); yy++) {
    for (let xx = Math.max(0, i - window); xx <= Math.min(size - 1, i + window); xx++) {
      const w = Math.exp(map[offset + yy * size + xx]! - top);
      sum += w;
      x += w * xx;
      y += w * yy;
    }
  }
  return [(x / sum + 0.5) * stride, (y / sum + 0.5) * stride];
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

function softmax(values: ArrayLike<number>): number[] {
  const list = Array.from(values);
  const top = Math.max(...list);
  const exps = list.map((v) => Math.exp(v - top));
  const sum = exps.reduce((a, b) => a + b, 0);
  return exps.map((v) => v / sum);
}

interface DetectorAnswer {
  /** The detector's "a supported pet" probability. */
  petProbability: number;
  /** Species probabilities in PetSpecies order, among pets. */
  species: number[];
  /** Where faces may be, best first: the strongest peaks of the face-centre heatmap, each read as key points. */
  candidates: KeyPoints[];
}

/** One look at the photo: the detector's answer, and the landmark model's on the face it pointed at. */
interface Look {
  detector: DetectorAnswer;
  answer: LandmarkAnswer;
}

interface LandmarkAnswer {
  points: [Point, Point, Point, Point, Point];
  faceScore: number;
  view: FaceView;
  mouthOpen: boolean;
  species: number[];
}

export interface PetFaceModel extends Required<FaceDetector> {
  readonly provider: ExecutionProvider;
  /** The execution providers its sessions were created with (`cuda`, `cpu`: CUDA first, the CPU for what it lacks). */
  readonly providers: string[];
}

export interface LoadPetFaceModelOptions {
  files?: { detector: string; landmarks: string };
  provider?: ExecutionProvider;
  cudaFallback?: 'cpu' | 'refuse';
  logger?: Logger;
  /** Threads onnxruntime may use per session; default: up to 4 cores. */
  intraOpThreads?: number;
  /** onnxruntime's graph optimisations; default 'all'. */
  graphOptimization?: 'basic' | 'all';
}

async function readModel(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path);
  } catch (error) {
    throw new RenderError('model_load', `cannot read the pet-face model ${path}: ${(error as Error).message}`, 'Reinstall the render node (render-node/models/ ships the model files).', {
      cause: error,
    });
  }
}

function parseMetadata<T extends z.ZodType>(schema: T, bytes: Uint8Array, path: string): z.infer<T> {
  const parsed = schema.safeParse(readOnnxMetadata(bytes));
  if (!parsed.success) {
    throw new RenderError('model_contract', `${path} is not a petsing pet-face model: ${z.prettifyError(parsed.error)}`, 'Rebuild it with npm run train:face (render-node/models/README.md).');
  }
  return parsed.data;
}

/** Loads both files of the pet-face model once per process; detection then costs one or two detector runs and three to eight landmark runs. */
export async function loadPetFaceModel(options: LoadPetFaceModelOptions = {}): Promise<PetFaceModel> {
  const started = performance.now();
  const files = options.files ?? BUNDLED_FACE_MODEL;
  const logger = options.logger ?? silentLogger;
  const request = {
    provider: options.provider ?? 'cpu',
    cudaFallback: options.cudaFallback ?? 'refuse',
    logger,
    intraOpThreads: options.intraOpThreads ?? Math.min(4, availableParallelism()),
    ...(options.graphOptimization ? { graphOptimization: options.graphOptimization } : {}),
  };
  const [detectorBytes, landmarkBytes] = await Promise.all([readModel(files.detector), readModel(files.landmarks)]);
  const detectorMeta = parseMetadata(DetectorMetadata, detectorBytes, files.detector);
  const landmarkMeta = parseMetadata(LandmarkMetadata, landmarkBytes, files.landmarks);
  const detector = await createSession(detectorBytes, { ...request, label: 'pet-face detector' });
  const landmarks = await createSession(landmarkBytes, { ...request, label: 'pet-face landmark model' });
  const speciesOrder = PetSpecies.options;
  if (detectorMeta.classes[0] !== 'none' || speciesOrder.some((s, i) => detectorMeta.classes[i + 1] !== s || landmarkMeta.species[i] !== s)) {
    throw new RenderError('model_contract', `the pet-face model's classes (${detectorMeta.classes.join(', ')}) are not none + ${speciesOrder.join(', ')}`, 'Rebuild it with npm run train:face.');
  }
  const loadMs = performance.now() - started;
  let warmUpMs: number;
  try {
    warmUpMs = (await warmUp(detector.session, [1, 3, detectorMeta.input_side, detectorMeta.input_side]))
      + (await warmUp(landmarks.session, [1, 3, landmarkMeta.input_side, landmarkMeta.input_side]));
  } catch (error) {
    await detector.session.release();
    await landmarks.session.release();
    throw new RenderError('model_contract', `the pet-face model failed its warm-up run: ${(error as Error).message}`, 'Rebuild it with npm run train:face (render-node/models/README.md).', { cause: error });
  }

  async function runDetector(image: RgbImage): Promise<DetectorAnswer> {
    const side = detectorMeta.input_side;
    const scale = side / Math.max(image.width, image.height);
    const width = Math.max(1, Math.round(image.width * scale));
    const height = Math.max(1, Math.round(image.height * scale));
    const padLeft = Math.floor((side - width) / 2);
    const padTop = Math.floor((side - height) / 2);
    const fill = detectorMeta.fill;
    const { data } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
      .resize(width, height, { fit: 'fill' })
      .extend({ left: padLeft, top: padTop, right: side - width - padLeft, bottom: side - height - padTop, background: { r: fill, g: fill, b: fill } })
      .raw()
      .toBuffer({ resolveWithObject: true });
    const plane = side * side;
    const tensor = new Float32Array(3 * plane);
    for (let i = 0; i < plane; i++) for (let c = 0; c < 3; c++) tensor[c * plane + i] = data[i * 3 + c]! / 255;
    const session = detector.session;
    const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', tensor, [1, 3, side, side]) });
    const output = (name: string) => out[name]!.data as Float32Array;
    const centre = output('centre');
    const offsets = output('offsets');
    const classes = softmax(output('classes'));
    const cells = side / detectorMeta.stride;
    const unit = detectorMeta.offset_unit;
    const candidates = localMaxima(centre, cells).map((best) => {
      const cell: Point = [((best % cells) + 0.5) * detectorMeta.stride, (Math.floor(best / cells) + 0.5) * detectorMeta.stride];
      return [0, 1, 2, 3].map((k): Point => {
        const x = cell[0] + offsets[2 * k * cells * cells + best]! * unit;
        const y = cell[1] + offsets[(2 * k + 1) * cells * cells + best]! * unit;
        return [(x - padLeft) * (image.width / width), (y - padTop) * (image.height / height)];
      }) as KeyPoints;
    });
    const pets = classes.slice(1);
    const petTotal = pets.reduce((a, b) => a + b, 0);
    return { petProbability: 1 - classes[0]!, species: pets.map((p) => p / Math.max(petTotal, 1e-6)), candidates };
  }

  async function runLandmarks(image: RgbImage, key: KeyPoints): Promise<LandmarkAnswer> {
    const side = landmarkMeta.input_side;
    const toCrop = cropMatrix(key, side, landmarkMeta.crop_side_in_radii, landmarkMeta.min_radius);
    const tensor = await sampleCrop(image, toCrop, side, landmarkMeta.fill);
    const session = landmarks.session;
    const out = await session.run({ [session.inputNames[0]!]: new ort.Tensor('float32', tensor, [1, 3, side, side]) });
    const heat = out.heatmaps!.data as Float32Array;
    const attributes = out.attributes!.data as Float32Array;
    const cells = side / landmarkMeta.stride;
    const toImage = invert(toCrop);
    const points = landmarkMeta.landmarks.map((_, k) =>
      apply(toImage, peak(heat, k * cells * cells, cells, landmarkMeta.stride, landmarkMeta.peak_window)),
    ) as LandmarkAnswer['points'];
    if (points[0][0] > points[1][0]) [points[0], points[1]] = [points[1], points[0]];
    const at = (name: string) => landmarkMeta.attributes.indexOf(name);
    const views = landmarkMeta.views.map((v) => attributes[at(`view:${v}`)]!);
    return {
      points,
      faceScore: sigmoid(attributes[at('face')]!),
      view: FaceView.parse(landmarkMeta.views[views.indexOf(Math.max(...views))]),
      mouthOpen: sigmoid(attributes[at('mouth_open')]!) >= 0.5,
      species: softmax(landmarkMeta.species.map((s) => attributes[at(`species:${s}`)]!)),
    };
  }

  const keyOf = (p: LandmarkAnswer['points']): KeyPoints => [[(p[0][0] + p[1][0]) / 2, (p[0][1] + p[1][1]) / 2], p[2], p[3], p[4]];

  /** The landmark model again on the frame of its own answer (LANDMARK_PASSES in all). */
  async function refine(image: RgbImage, answer: LandmarkAnswer): Promise<LandmarkAnswer> {
    for (let pass = 1; pass < LANDMARK_PASSES; pass++) answer = await runLandmarks(image, keyOf(answer.points));
    return answer;
  }

  /** How sure a look is of a pet's face: the detector's pet probability times the landmark model's face score. */
  const confidence = (look: Look) => look.detector.petProbability * look.answer.faceScore;

  /**
   * The detector on the photo turned clockwise by `turns` quarter turns; its face centres tried in turn by the
   * landmark model on the photo itself (the strongest first, the next only while none looked like a face: a
   * tilted head, two animals), the most face-like refined.
   */
  async function look(image: RgbImage, turns = 0): Promise<Look> {
    const { copy, toPhoto } = await turnedCopy(image, turns);
    const found = await runDetector(copy);
    let best: LandmarkAnswer | undefined;
    for (const key of found.candidates) {
      const answer = await runLandmarks(image, key.map(toPhoto) as KeyPoints);
      if (!best || answer.faceScore > best.faceScore) best = answer;
      if (answer.faceScore >= landmarkMeta.min_face_score) break;
    }
    return { detector: found, answer: await refine(image, best!) };
  }

  function toFace(answer: LandmarkAnswer, confidence: number, species: PetSpecies, method: string): PetFace {
    const [left, right, nose, mouth, chin] = answer.points;
    const face = { eyes: [left, right] as [Point, Point], nose, mouth, chin };
    return {
      confidence,
      ...face,
      mouthCorners: null,
      head: headAround(face, faceLength(face)),
      method,
      species,
      view: answer.view,
      mouthOpen: answer.mouthOpen,
      // In a profile the far eye is an estimate: nothing is drawn on it.
      eyesEstimated: answer.view === 'profile',
    };
  }

  const name = `pet-face model ${detectorMeta.model_version}`;
  const model: PetFaceModel = {
    name,
    version: `${detectorMeta.model_version}+${landmarkMeta.model_version}`,
    provider: detector.provider,
    providers: detector.providers,
    async detect(image) {
      let best = await look(image);
      const turns = quarterTurns(best.answer.points);
      if (turns !== 0 || best.answer.faceScore < landmarkMeta.min_face_score) {
        // A head turned sideways or upside down, or no face where the detector looked: one more look with the
        // photo turned (so that head is upright, or the whole photo upside down), as the detector has seen most
        // pets upright. The surer look wins.
        const again = await look(image, turns || 2);
        if (confidence(again) >= confidence(best)) best = again;
      }
      const { detector: found, answer } = best;
      if (found.petProbability < detectorMeta.min_pet_probability) {
        return new DetectionFailure(`no supported pet in the photo (pet probability ${found.petProbability.toFixed(2)})`);
      }
      if (answer.faceScore < landmarkMeta.min_face_score) {
        return new DetectionFailure(`no pet face where the pet was found (face score ${answer.faceScore.toFixed(2)})`);
      }
      const species = found.species.map((p, i) => (p + answer.species[i]!) / 2);
      const speciesName = PetSpecies.options[species.indexOf(Math.max(...species))]!;
      return toFace(answer, confidence(best), speciesName, name);
    },
    async detectAround(image, mouth, near) {
      // The face's turn from the face found elsewhere, else upright; its size unknown, so a few are tried and
      // the crop the model finds most face-like wins, then is refined.
      const axis: Point = near ? unitAxis(near) : [0, 1];
      const lengths = near
        ? [1, 0.5, 2].map((k) => k * faceLength(near))
        : AROUND_LENGTHS.map((k) => k * Math.max(image.width, image.height));
      let best: LandmarkAnswer | undefined;
      for (const length of lengths) {
        const at = (k: number): Point => [mouth[0] + axis[0] * k * length, mouth[1] + axis[1] * k * length];
        const answer = await runLandmarks(image, [at(-0.75), at(-0.2), mouth, at(0.25)]);
        if (!best || answer.faceScore > best.faceScore) best = answer;
      }
      const answer = await refine(image, best!);
      const species = near?.species ?? PetSpecies.options[answer.species.indexOf(Math.max(...answer.species))]!;
      return toFace(answer, answer.faceScore, species, `${name} around the given mouth`);
    },
    release: async () => {
      await detector.session.release();
      await landmarks.session.release();
    },
  };
  // Both sessions have run once on a blank photo: the first person's check or render waits for no kernel selection.
  logger.info('pet-face model ready', { model: name, provider: detector.provider, providers: detector.providers, loadMs: Math.round(loadMs), warmUpMs: Math.round(warmUpMs) });
  return model;
}

/**
 * Cells of a heatmap that are the largest of their 3 × 3 neighbourhood, strongest first: at most
 * CANDIDATES, each at least CANDIDATE_SHARE of the strongest (training/petface/pipeline.py's local_maxima).
 */
function localMaxima(heat: Float32Array, cells: number): number[] {
  const peaks: number[] = [];
  for (let j = 0; j < cells; j++) {
    for (let i = 0; i < cells; i++) {
      const value = heat[j * cells + i]!;
      let top = true;
      for (let dy = -1; dy <= 1 && top; dy++) {
        for (let dx = -1; dx <= 1; dx++) {
          const y = j + dy;
          const x = i + dx;
          if (y >= 0 && y < cells && x >= 0 && x < cells && heat[y * cells + x]! > value) top = false;
        }
      }
      if (top) peaks.push(j * cells + i);
    }
  }
  peaks.sort((a, b) => heat[b]! - heat[a]!);
  // The heatmap holds logits; the share is taken of probabilities, as the training side does.
  const best = sigmoid(heat[peaks[0]!]!);
  return peaks.slice(0, CANDIDATES).filter((index) => sigmoid(heat[index]!) >= CANDIDATE_SHARE * best);
}

/** Clockwise quarter turns (0-3) that bring the face's axis (eyes to mouth and chin) nearest to pointing down. */
function quarterTurns(points: LandmarkAnswer['points']): number {
  const [left, right, , mouth, chin] = points;
  const down: Point = [(mouth[0] + chin[0] - left[0] - right[0]) / 2, (mouth[1] + chin[1] - left[1] - right[1]) / 2];
  return (((Math.round(Math.atan2(down[0], down[1]) / (Math.PI / 2)) % 4) + 4) % 4);
}

/**
 * The photo turned clockwise by `turns` quarter turns, at most DETECTOR_COPY_SIDE a side (the detector sees
 * 256 px), and the map from the copy's pixels back to the photo's.
 */
async function turnedCopy(image: RgbImage, turns: number): Promise<{ copy: RgbImage; toPhoto: (p: Point) => Point }> {
  if (turns === 0) return { copy: image, toPhoto: (p) => p };
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .resize({ width: DETECTOR_COPY_SIDE, height: DETECTOR_COPY_SIDE, fit: 'inside', withoutEnlargement: true })
    .rotate(90 * turns)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const scale = (turns % 2 === 0 ? image.width : image.height) / info.width;
  const { width: w, height: h } = image;
  const toPhoto = ([u, v]: Point): Point => {
    const [x, y] = [u * scale, v * scale];
    return turns === 1 ? [y, h - x] : turns === 2 ? [w - x, h - y] : [w - y, x];
  };
  return { copy: { width: info.width, height: info.height, data }, toPhoto };
}

/** The unit vector from the eyes' midpoint towards the chin. */
function unitAxis(face: PetFace): Point {
  const mid = eyeMidpoint(face);
  const length = Math.max(1e-6, Math.hypot(face.chin[0] - mid[0], face.chin[1] - mid[1]));
  return [(face.chin[0] - mid[0]) / length, (face.chin[1] - mid[1]) / length];
}

let shared: Promise<PetFaceModel> | undefined;

/** The bundled model on the CPU, loaded once per process (CLI, tests, and nodes without a configured provider). */
export function bundledPetFaceModel(): Promise<PetFaceModel> {
  shared ??= loadPetFaceModel();
  return shared;
}
