import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import sharp from 'sharp';
import type { PetSpecies } from '@petsing/workflows';
import { decodeImage, type DecodedImage } from './image-decoder.ts';
import { DetectionFailure, faceLength, scaleFace, type FaceDetector, type PetFace, type Point } from './pet-face.ts';

/** One photo's hand-checked landmarks (the format of shared/pets/landmarks.json and shared/petfaces/landmarks.json). */
export interface AnnotatedPhoto {
  /** A species, 'none' (no supported pet) or, in the training set, 'skip' (a pet whose face could not be annotated). */
  species: string;
  view?: string;
  width: number;
  height: number;
  eyes?: [Point, Point];
  nose?: Point;
  mouth?: Point;
  chin?: Point;
  mouth_open?: boolean;
  notes?: string;
}

export interface PhotoResult {
  file: string;
  species: string;
  /** Pets: mouth error over the eye-midpoint-to-chin distance; null when no face was found. */
  mouthError: number | null;
  /** Whether the detector refused the photo (no pet face). */
  refused: boolean;
  face: PetFace | null;
  reason?: string;
  /** Decoding the photo, then detection alone. */
  decodeMs: number;
  detectMs: number;
}

/** The benchmark's tolerance: the mouth within this many face lengths (eye midpoint to chin). */
export const MOUTH_TOLERANCE = 0.35;

export async function loadAnnotations(dir: string): Promise<Record<string, AnnotatedPhoto>> {
  return JSON.parse(await readFile(join(dir, 'landmarks.json'), 'utf8')) as Record<string, AnnotatedPhoto>;
}

/**
 * Runs the detector on one annotated photo (`file` relative to `dir`), turned clockwise by `turns` quarter
 * turns after decoding (how well the model copes with pets on their side or upside down), and measures it
 * against the annotation.
 */
async function evaluatePhoto(dir: string, file: string, annotation: AnnotatedPhoto, detector: FaceDetector, turns = 0): Promise<PhotoResult> {
  let mark = performance.now();
  const decoded = await decodeImage(join(dir, file));
  const decodeMs = performance.now() - mark;
  const image = turns ? await turnImage(decoded, turns) : decoded;
  const turn = (p: Point): Point => turnPoint(p, turns, decoded.orientedWidth, decoded.orientedHeight);
  mark = performance.now();
  const found = await detector.detect(image);
  const detectMs = performance.now() - mark;
  const face = found instanceof DetectionFailure ? null : scaleFace(found, image.orientedWidth / image.width);
  const reason = found instanceof DetectionFailure ? found.reason : undefined;
  const base = { file, species: annotation.species, refused: face === null, face, decodeMs, detectMs, ...(reason ? { reason } : {}) };
  if (!annotation.mouth || !annotation.eyes || !annotation.chin) return { ...base, mouthError: null };
  const unit = faceLength({ eyes: annotation.eyes, chin: annotation.chin });
  const mouth = turn(annotation.mouth);
  const mouthError = face ? Math.hypot(face.mouth[0] - mouth[0], face.mouth[1] - mouth[1]) / unit : null;
  return { ...base, mouthError };
}

async function turnImage(image: DecodedImage, turns: number): Promise<DecodedImage> {
  const { data, info } = await sharp(image.data, { raw: { width: image.width, height: image.height, channels: 3 } })
    .rotate(90 * turns)
    .raw()
    .toBuffer({ resolveWithObject: true });
  const odd = turns % 2 === 1;
  return {
    ...image,
    data,
    width: info.width,
    height: info.height,
    orientedWidth: odd ? image.orientedHeight : image.orientedWidth,
    orientedHeight: odd ? image.orientedWidth : image.orientedHeight,
  };
}

/** A point of a width × height photo in the same photo turned clockwise by `turns` quarter turns. */
function turnPoint(point: Point, turns: number, width: number, height: number): Point {
  let [x, y] = point;
  let [w, h] = [width, height];
  for (let k = 0; k < turns; k++) {
    [x, y, w, h] = [h - y, x, h, w];
  }
  return [x, y];
}

/** Every photo of an annotated folder (`images/` below it when the annotations name files there), or the named ones. */
export async function evaluateDetector(dir: string, detector: FaceDetector, files?: string[], turns = 0): Promise<PhotoResult[]> {
  const annotations = await loadAnnotations(dir);
  const names = files ?? Object.keys(annotations);
  const results: PhotoResult[] = [];
  for (const file of names) {
    const annotation = annotations[file];
    if (!annotation || annotation.species === 'skip') continue;
    results.push(await evaluatePhoto(dir, imagePath(dir, file), annotation, detector, turns));
  }
  return results.map((r) => ({ ...r, file: r.file.replace(/^images\//, '') }));
}

/** The training set keeps its photos under images/; the development set beside its landmarks.json. */
const imagePath = (dir: string, file: string) => (dir.replace(/\/$/, '').endsWith('petfaces') ? `images/${file}` : file);

export interface Figures {
  pets: number;
  /** Pets found with the mouth within MOUTH_TOLERANCE. */
  mouthWithin: number;
  petsRefused: number;
  speciesRight: number;
  noPet: number;
  noPetRefused: number;
  medianMouthError: number;
}

/** The benchmark's figures over a set of results (all of them, or one species'). */
export function figures(results: PhotoResult[]): Figures {
  const pets = results.filter((r) => r.species !== 'none');
  const none = results.filter((r) => r.species === 'none');
  const errors = pets.map((r) => r.mouthError ?? Infinity).sort((a, b) => a - b);
  return {
    pets: pets.length,
    mouthWithin: pets.filter((r) => r.mouthError !== null && r.mouthError <= MOUTH_TOLERANCE).length,
    petsRefused: pets.filter((r) => r.refused).length,
    speciesRight: pets.filter((r) => r.face?.species === (r.species as PetSpecies)).length,
    noPet: none.length,
    noPetRefused: none.filter((r) => r.refused).length,
    medianMouthError: errors[Math.floor(errors.length / 2)] ?? NaN,
  };
}
