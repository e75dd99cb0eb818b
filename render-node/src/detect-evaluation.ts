import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { detectInPhoto, faceLength, type FaceDetector, type PetFace, type Point } from './pet-face.ts';

/** One photo's hand-checked landmarks (the format of shared/pets/landmarks.json). */
export interface AnnotatedPhoto {
  species: string;
  view?: string;
  width: number;
  height: number;
  eyes?: [Point, Point];
  nose?: Point;
  mouth?: Point;
  chin?: Point;
  notes?: string;
}

export interface PhotoResult {
  file: string;
  species: string;
  /** Pets: mouth error over the eye-midpoint-to-chin distance; null when no face was found. */
  mouthError: number | null;
  /** No-pet photos: whether the detector refused them. */
  refused: boolean;
  face: PetFace | null;
  reason?: string;
  /** Decoding plus detection. */
  ms: number;
}

/** The benchmark's tolerance: the mouth within this many face lengths (eye midpoint to chin). */
export const MOUTH_TOLERANCE = 0.35;

export async function loadAnnotations(dir: string): Promise<Record<string, AnnotatedPhoto>> {
  return JSON.parse(await readFile(join(dir, 'landmarks.json'), 'utf8')) as Record<string, AnnotatedPhoto>;
}

/** Runs the detector on one annotated photo and measures it against the annotation. */
export async function evaluatePhoto(dir: string, file: string, annotation: AnnotatedPhoto, detector: FaceDetector): Promise<PhotoResult> {
  const started = performance.now();
  const { face, reason } = await detectInPhoto(join(dir, file), detector);
  const ms = performance.now() - started;
  if (annotation.species === 'none' || !annotation.mouth || !annotation.eyes || !annotation.chin) {
    return { file, species: annotation.species, mouthError: null, refused: face === null, face, reason, ms };
  }
  const unit = faceLength({ eyes: annotation.eyes, chin: annotation.chin });
  const mouthError = face ? Math.hypot(face.mouth[0] - annotation.mouth[0], face.mouth[1] - annotation.mouth[1]) / unit : null;
  return { file, species: annotation.species, mouthError, refused: face === null, face, reason, ms };
}

export async function evaluateDetector(dir: string, detector: FaceDetector): Promise<PhotoResult[]> {
  const annotations = await loadAnnotations(dir);
  const results: PhotoResult[] = [];
  for (const [file, annotation] of Object.entries(annotations)) results.push(await evaluatePhoto(dir, file, annotation, detector));
  return results;
}
