import type { FaceHints, FaceView, FoundFace, PetSpecies } from '@petsing/workflows';
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
  /** What the pet-face model says of the pet (absent from a custom detector). */
  species?: PetSpecies;
  view?: FaceView;
  /** The mouth is already open in the photo. */
  mouthOpen?: boolean;
}

/** Why no face was found, for the face_not_found message and the CLI. */
export class DetectionFailure {
  constructor(readonly reason: string) {}
}

export interface FaceDetector {
  readonly name: string;
  /**
   * Which finder this is, exactly (FaceModelVersion): the pet-face model's model_versions, or a custom model's
   * file hash. A stored face is used by a render only when its finder had the same version.
   */
  readonly version: string;
  detect(image: RgbImage): Promise<PetFace | DetectionFailure>;
  /**
   * The face around a mouth a person pointed at (pixels of `image`), when the detector can look there:
   * `near` is the face it found elsewhere in the photo, if any, for the face's size and turn.
   */
  detectAround?(image: RgbImage, mouth: Point, near: PetFace | null): Promise<PetFace>;
  /** Frees the detector's sessions (a process that stops). */
  release?(): Promise<void>;
}

/** A photo's face in the photo's own pixels (after EXIF orientation), and the photo's size in them. */
export interface PhotoFace {
  width: number;
  height: number;
  face: PetFace | null;
  /** Why no face was found. */
  reason?: string;
}

/**
 * A photo check decodes at most this many pixels a side: the detector sees 256 px of the whole photo and a
 * 192 px crop of the face, so more only costs decoding time (the render decodes its own, larger copy).
 */
export const CHECK_MAX_SIDE = 1536;

/** Decodes a photo file (EXIF applied, downscaled for work) and finds its face, reported in the photo's own pixels. */
export async function detectInPhoto(path: string, detector: FaceDetector): Promise<PhotoFace> {
  const image = await decodeImage(path, CHECK_MAX_SIDE);
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
  return faceRecord(face, face.confidence, ([x, y]) => ({ x: x / width, y: y / height }), (head) => ({ left: head.left / width, top: head.top / height, width: head.width / width, height: head.height / height }));
}

/**
 * A face the photo check found (fractions of the photo), in pixels of an image `width` × `height` of the same
 * photo: the landmarks exactly as the owner was shown them. A profile's far eye was estimated by the model, as
 * when the render finds the face itself.
 */
export function faceFromFractions(found: FoundFace, width: number, height: number, method: string): PetFace {
  const px = (p: { x: number; y: number }): Point => [p.x * width, p.y * height];
  return {
    confidence: found.confidence,
    eyes: [px(found.eyes[0]), px(found.eyes[1])],
    nose: px(found.nose),
    mouth: px(found.mouth),
    mouthCorners: found.mouth_corners ? [px(found.mouth_corners[0]), px(found.mouth_corners[1])] : null,
    chin: px(found.chin),
    head: { left: found.head.left * width, top: found.head.top * height, width: found.head.width * width, height: found.head.height * height },
    method,
    eyesEstimated: found.view === 'profile',
    ...(found.species ? { species: found.species } : {}),
    ...(found.view ? { view: found.view } : {}),
    ...(found.mouth_open === undefined ? {} : { mouthOpen: found.mouth_open }),
  };
}

/** The face's fields in the snake_case of the wire (FoundFace, `detect --json`), with its points and head box mapped. */
export function faceRecord<P, B>(face: PetFace, confidence: number, point: (p: Point) => P, box: (head: PetFace['head']) => B) {
  return {
    confidence,
    eyes: [point(face.eyes[0]), point(face.eyes[1])] as [P, P],
    nose: point(face.nose),
    mouth: point(face.mouth),
    mouth_corners: face.mouthCorners ? ([point(face.mouthCorners[0]), point(face.mouthCorners[1])] as [P, P]) : null,
    chin: point(face.chin),
    head: box(face.head),
    ...(face.species ? { species: face.species } : {}),
    ...(face.view ? { view: face.view } : {}),
    ...(face.mouthOpen === undefined ? {} : { mouth_open: face.mouthOpen }),
  };
}

/** The point between the eyes. */
export const eyeMidpoint = ({ eyes: [[x0, y0], [x1, y1]] }: Pick<PetFace, 'eyes'>): Point => [(x0 + x1) / 2, (y0 + y1) / 2];

/** Distance between the eyes (short in a profile). */
export const eyeDistance = ({ eyes: [[x0, y0], [x1, y1]] }: Pick<PetFace, 'eyes'>): number => Math.hypot(x1 - x0, y1 - y0);

/** Distance from the eyes' midpoint to the chin: the face's own length unit (the benchmark's, too). */
export function faceLength(face: Pick<PetFace, 'eyes' | 'chin'>): number {
  const [x, y] = eyeMidpoint(face);
  return Math.hypot(x - face.chin[0], y - face.chin[1]);
}

const sub = (a: Point, b: Point): Point => [a[0] - b[0], a[1] - b[1]];
const add = (a: Point, b: Point): Point => [a[0] + b[0], a[1] + b[1]];
const times = (a: Point, k: number): Point => [a[0] * k, a[1] * k];

/**
 * How far the head reaches past its landmarks, in face lengths along the face's own axis (eyes' midpoint to
 * chin): the skull and ears above the eyes, the cheeks and ears beside them, the jaw under the chin.
 */
const HEAD_ABOVE_EYES = 1;
const HEAD_BESIDE_EYES = 0.8;
const HEAD_BELOW_CHIN = 0.2;

/** The head's box: the landmarks and the head around them, turned with the face, as an upright box. */
export function headAround(face: Pick<PetFace, 'eyes' | 'nose' | 'mouth' | 'chin'>, length: number): Box {
  const mid: Point = times(add(face.eyes[0], face.eyes[1]), 0.5);
  const toChin = sub(face.chin, mid);
  const norm = Math.hypot(...toChin);
  const down: Point = norm > 1e-6 ? times(toChin, 1 / norm) : [0, 1];
  const across: Point = [-down[1], down[0]];
  const points = [
    face.eyes[0], face.eyes[1], face.nose, face.mouth, face.chin,
    add(mid, times(down, -HEAD_ABOVE_EYES * length)),
    add(mid, times(across, HEAD_BESIDE_EYES * length)),
    add(mid, times(across, -HEAD_BESIDE_EYES * length)),
    add(face.chin, times(down, HEAD_BELOW_CHIN * length)),
  ];
  const xs = points.map((p) => p[0]);
  const ys = points.map((p) => p[1]);
  const left = Math.min(...xs);
  const top = Math.min(...ys);
  return { left, top, width: Math.max(...xs) - left, height: Math.max(...ys) - top };
}


/**
 * A face built around the points a person gave (pixels of an image `width` × `height`). Their points are
 * kept exactly. A found face fills in the rest when it agrees with them (its mouth within one face length
 * of the given one; the pet-face model looks for it around the given mouth): its eyes and nose where the
 * model saw them, its chin unless the given mouth lies below it, in which case the chin keeps its distance
 * under the given mouth (a hint that contradicts the model wins; so does a given species). With no such face, the rest is estimated
 * from typical pet proportions around the given mouth (a sixth of the photo's shorter side long), and no
 * eyelids are drawn on eyes so placed.
 */
export function applyHints(found: PetFace | null, hints: FaceHints, width: number, height: number): PetFace {
  const px = (p: { x: number; y: number }): Point => [p.x * width, p.y * height];
  const mouth = px(hints.mouth);
  const agrees = found !== null && Math.hypot(found.mouth[0] - mouth[0], found.mouth[1] - mouth[1]) <= faceLength(found);
  const base = agrees ? found : null;
  const length = base ? faceLength(base) : hints.chin && hints.eyes
    ? faceLength({ eyes: [px(hints.eyes[0]), px(hints.eyes[1])], chin: px(hints.chin) })
    : Math.min(width, height) / 6;
  const eyes: [Point, Point] = hints.eyes
    ? [px(hints.eyes[0]), px(hints.eyes[1])]
    : base
      ? base.eyes
      : [add(mouth, times([-0.45, -0.8], length)), add(mouth, times([0.45, -0.8], length))];
  const nose = hints.nose ? px(hints.nose) : base ? base.nose : add(mouth, [0, -0.25 * length]);
  const chin = hints.chin ? px(hints.chin) : base ? chinBelow(base, mouth) : add(mouth, [0, 0.25 * length]);
  return {
    confidence: 1,
    eyes,
    nose,
    mouth,
    mouthCorners: base?.mouthCorners ? shiftCorners(base.mouthCorners, sub(mouth, base.mouth)) : null,
    chin,
    head: headAround({ eyes, nose, mouth, chin }, length),
    method: base ? `${base.method}, with the given mouth` : 'given by the person',
    eyesEstimated: hints.eyes ? false : base ? Boolean(base.eyesEstimated) : true,
    ...(hints.species ?? base?.species ? { species: hints.species ?? base?.species } : {}),
    ...(base?.view ? { view: base.view } : {}),
    ...(base?.mouthOpen === undefined ? {} : { mouthOpen: base.mouthOpen }),
  };
}

/** The found chin, unless the given mouth is not above it on the face's axis: then the chin keeps its distance below that mouth. */
function chinBelow(face: PetFace, mouth: Point): Point {
  const mid: Point = times(add(face.eyes[0], face.eyes[1]), 0.5);
  const axis = sub(face.chin, mid);
  const length = Math.max(1e-6, Math.hypot(...axis));
  const along = (p: Point) => (sub(p, mid)[0] * axis[0] + sub(p, mid)[1] * axis[1]) / length;
  // The chin must stay at least a tenth of the face length below the mouth.
  if (along(face.chin) - along(mouth) >= 0.1 * length) return face.chin;
  return add(mouth, sub(face.chin, face.mouth));
}

const shiftCorners = (corners: [Point, Point], shift: Point): [Point, Point] => [add(corners[0], shift), add(corners[1], shift)];
