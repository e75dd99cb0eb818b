import type { FaceHints, FoundFace } from '@petsing/workflows';
import { decodeImage, type RgbImage } from './image-decoder.ts';

export type Point = [number, number];

export interface Box {
  left: number;
  top: number;
  width: number;
  height: number;
}

/** A pet's face landmarks, in pixels of the image they were found on. */
export interface PetFace {
  /** 0-1: how sure the detector is that this is a pet's face. */
  confidence: number;
  /** Left to right in the image; an eye hidden in a profile is estimated. */
  eyes: [Point, Point];
  /** The nose, or for birds the beak tip. */
  nose: Point;
  /** The centre of the mouth (of the opening when open). */
  mouth: Point;
  /** Where the lips meet on either side, when visible. */
  mouthCorners: [Point, Point] | null;
  /** The chin / lower-jaw point. */
  chin: Point;
  head: Box;
  /** How it was found, for logs and the CLI. */
  method: string;
  /** Eyes not seen where they are (placed by typical proportions around a given mouth, or carried along by a moved mouth): nothing is drawn on them. */
  eyesEstimated?: boolean;
}

/** Why no face was found, for the face_not_found message and the CLI. */
export class DetectionFailure {
  constructor(readonly reason: string) {}
}

export interface FaceDetector {
  readonly name: string;
  detect(image: RgbImage): Promise<PetFace | DetectionFailure>;
}

/** A photo's face in the photo's own pixels (after EXIF orientation), and the photo's size in them. */
export interface PhotoFace {
  width: number;
  height: number;
  face: PetFace | null;
  /** Why no face was found. */
  reason?: string;
}

/** Decodes a photo file (EXIF applied, downscaled for work) and finds its face, reported in the photo's own pixels. */
export async function detectInPhoto(path: string, detector: FaceDetector): Promise<PhotoFace> {
  const image = await decodeImage(path);
  const found = await detector.detect(image);
  const size = { width: image.orientedWidth, height: image.orientedHeight };
  if (found instanceof DetectionFailure) return { ...size, face: null, reason: found.reason };
  return { ...size, face: scaleFace(found, image.orientedWidth / image.width) };
}

const mapPoint = (p: Point, f: (x: number, y: number) => Point): Point => f(p[0], p[1]);

/** The same face with every coordinate passed through `f` (scaling, cropping). */
export function mapFace(face: PetFace, f: (x: number, y: number) => Point, scale: number): PetFace {
  const [left, top] = f(face.head.left, face.head.top);
  return {
    ...face,
    eyes: [mapPoint(face.eyes[0], f), mapPoint(face.eyes[1], f)],
    nose: mapPoint(face.nose, f),
    mouth: mapPoint(face.mouth, f),
    mouthCorners: face.mouthCorners ? [mapPoint(face.mouthCorners[0], f), mapPoint(face.mouthCorners[1], f)] : null,
    chin: mapPoint(face.chin, f),
    head: { left, top, width: face.head.width * scale, height: face.head.height * scale },
  };
}

export const scaleFace = (face: PetFace, scale: number): PetFace => mapFace(face, (x, y) => [x * scale, y * scale], scale);

/** The face as fractions of an image of width × height (the contract's FoundFace). */
export function faceToFractions(face: PetFace, width: number, height: number): FoundFace {
  const point = ([x, y]: Point) => ({ x: x / width, y: y / height });
  return {
    confidence: face.confidence,
    eyes: [point(face.eyes[0]), point(face.eyes[1])],
    nose: point(face.nose),
    mouth: point(face.mouth),
    mouth_corners: face.mouthCorners ? [point(face.mouthCorners[0]), point(face.mouthCorners[1])] : null,
    chin: point(face.chin),
    head: { left: face.head.left / width, top: face.head.top / height, width: face.head.width / width, height: face.head.height / height },
  };
}

/** Distance from the eyes' midpoint to the chin: the face's own length unit (the benchmark's, too). */
export function faceLength(face: Pick<PetFace, 'eyes' | 'chin'>): number {
  const [[x0, y0], [x1, y1]] = face.eyes;
  return Math.hypot((x0 + x1) / 2 - face.chin[0], (y0 + y1) / 2 - face.chin[1]);
}

const sub = (a: Point, b: Point): Point => [a[0] - b[0], a[1] - b[1]];
const add = (a: Point, b: Point): Point => [a[0] + b[0], a[1] + b[1]];
const times = (a: Point, k: number): Point => [a[0] * k, a[1] * k];

/** How far (in face lengths) a person may move the detected mouth while the detected eyes still count as seen. */
const SEEN_EYES_MOUTH_SHIFT = 0.1;

/**
 * A face built around the points a person gave (pixels of an image `width` × `height`). Their points
 * are kept exactly; a detected face fills in the rest when it agrees with them (its mouth within one
 * face length of the given one), otherwise the rest is estimated from typical pet proportions around
 * the given mouth, sized like the detected face or, without one, a sixth of the photo's shorter side.
 */
export function applyHints(detected: PetFace | null, hints: FaceHints, width: number, height: number): PetFace {
  const px = (p: { x: number; y: number }): Point => [p.x * width, p.y * height];
  const mouth = px(hints.mouth);
  const agrees = detected !== null && Math.hypot(detected.mouth[0] - mouth[0], detected.mouth[1] - mouth[1]) <= faceLength(detected);
  const base = agrees ? detected : null;
  // Proportions of an average frontal pet face, in face lengths (eye midpoint to chin) from the mouth.
  const length = base ? faceLength(base) : hints.chin && hints.eyes
    ? faceLength({ eyes: [px(hints.eyes[0]), px(hints.eyes[1])], chin: px(hints.chin) })
    : Math.min(width, height) / 6;
  const shift = base ? sub(mouth, base.mouth) : ([0, 0] as Point);
  const moved = (p: Point): Point => add(p, shift);
  const eyes: [Point, Point] = hints.eyes
    ? [px(hints.eyes[0]), px(hints.eyes[1])]
    : base
      ? [moved(base.eyes[0]), moved(base.eyes[1])]
      : [add(mouth, times([-0.45, -0.8], length)), add(mouth, times([0.45, -0.8], length))];
  const nose = hints.nose ? px(hints.nose) : base ? moved(base.nose) : add(mouth, [0, -0.25 * length]);
  const chin = hints.chin ? px(hints.chin) : base ? moved(base.chin) : add(mouth, [0, 0.25 * length]);
  const xs = [eyes[0][0], eyes[1][0], nose[0], mouth[0], chin[0]];
  const ys = [eyes[0][1], eyes[1][1], nose[1], mouth[1], chin[1]];
  const pad = 0.45 * length;
  const left = Math.min(...xs) - pad;
  const top = Math.min(...ys) - pad;
  const head = base && !hints.eyes && !hints.chin
    ? { ...base.head, left: base.head.left + shift[0], top: base.head.top + shift[1] }
    : { left, top, width: Math.max(...xs) + pad - left, height: Math.max(...ys) + pad - top };
  const corners = base?.mouthCorners ? ([moved(base.mouthCorners[0]), moved(base.mouthCorners[1])] as [Point, Point]) : null;
  // Detected eyes carried along by a moved mouth are a guess, not eyes that were seen: no eyelids are drawn on them.
  const eyesSeen = Boolean(hints.eyes) || (base !== null && Math.hypot(...shift) <= SEEN_EYES_MOUTH_SHIFT * length);
  return {
    confidence: 1,
    eyes,
    nose,
    mouth,
    mouthCorners: corners,
    chin,
    head,
    method: base ? `${base.method}, moved to the given mouth` : 'given by the person',
    eyesEstimated: !eyesSeen,
  };
}
