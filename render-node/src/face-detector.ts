import type { RgbImage } from './image-decoder.ts';
import { DetectionFailure, type FaceDetector, type PetFace, type Point } from './pet-face.ts';

/**
 * The default pet-face detector: classical image analysis, no learned weights. How it works and
 * where it fails: render-node/README.md, "Detector".
 *
 *  1. Dark-blob search: at a dozen scales, every point whose centre is clearly darker than the ring
 *     around it on all four sides (a pupil, an eye, a nose, a beak's nostril), not merely beside a dark
 *     edge. Catch-lights (a bright speck inside a dark blob) mark eyes.
 *  2. Faces: two blobs of similar size and darkness side by side (the eyes, head tilted at most 60°)
 *     with a third blob below them on the face's axis (the nose), ranked by contrast, catch-lights and
 *     the mirror symmetry of the face across its axis; the mouth lies below the nose along that axis.
 *  3. Nothing arranged like a face → no face. Profiles (one eye) are not found, and symmetric objects
 *     with dark spots are mistaken for faces: the README says where it fails.
 */

/** The detector works on a copy whose longer side is at most this. */
const WORK_SIDE = 480;
/** Mouth distance below the nose along the face axis, in eye distances (pets: 0.15-0.75, median ~0.35). */
const MOUTH_BELOW_NOSE = 0.35;
/** Chin distance below the mouth, in eye distances. */
const CHIN_BELOW_MOUTH = 0.22;
/** Eyes closer than this (working pixels) make a face too small to animate, and specks pair up at that size. */
const MIN_EYE_DISTANCE = 8;
/** Arrangements scoring below this are not reported: better no face than a mouth drawn on a cup. */
const MIN_SCORE = 30;
/**
 * The most this detector claims: it finds face-like arrangements, not animals, and is right on about a
 * quarter of real pets (bench:detect), so it never reports the certainty a learned model could.
 */
const MAX_CONFIDENCE = 0.6;

interface Plane {
  width: number;
  height: number;
  luma: Float32Array;
  /** Red minus green: pink noses stand out against fur by it. */
  redness: Float32Array;
  /** Summed-area table of luma, (width+1)×(height+1). */
  integral: Float64Array;
}

interface Blob {
  x: number;
  y: number;
  radius: number;
  /** Ring mean minus centre mean, in luma levels. */
  contrast: number;
  /** Centre mean luma. */
  darkness: number;
  /** A bright speck in the blob: a catch-light. */
  highlight: boolean;
  score: number;
}

function toPlane(image: RgbImage): { plane: Plane; scale: number } {
  const scale = Math.min(1, WORK_SIDE / Math.max(image.width, image.height));
  const width = Math.max(1, Math.round(image.width * scale));
  const height = Math.max(1, Math.round(image.height * scale));
  const luma = new Float32Array(width * height);
  const redness = new Float32Array(width * height);
  for (let gy = 0; gy < height; gy++) {
    const y0 = Math.floor((gy * image.height) / height);
    const y1 = Math.max(y0 + 1, Math.floor(((gy + 1) * image.height) / height));
    for (let gx = 0; gx < width; gx++) {
      const x0 = Math.floor((gx * image.width) / width);
      const x1 = Math.max(x0 + 1, Math.floor(((gx + 1) * image.width) / width));
      let r = 0;
      let g = 0;
      let b = 0;
      for (let y = y0; y < y1; y++) {
        let i = (y * image.width + x0) * 3;
        for (let x = x0; x < x1; x++, i += 3) {
          r += image.data[i]!;
          g += image.data[i + 1]!;
          b += image.data[i + 2]!;
        }
      }
      const count = (y1 - y0) * (x1 - x0);
      luma[gy * width + gx] = (0.299 * r + 0.587 * g + 0.114 * b) / count;
      redness[gy * width + gx] = (r - g) / count;
    }
  }
  const integral = new Float64Array((width + 1) * (height + 1));
  for (let y = 0; y < height; y++) {
    let row = 0;
    for (let x = 0; x < width; x++) {
      row += luma[y * width + x]!;
      integral[(y + 1) * (width + 1) + x + 1] = integral[y * (width + 1) + x + 1]! + row;
    }
  }
  return { plane: { width, height, luma, redness, integral }, scale: width / image.width };
}

/** Sum of luma over [x0, x1) × [y0, y1), clipped to the plane. */
function boxSum(plane: Plane, x0: number, y0: number, x1: number, y1: number): { sum: number; area: number } {
  const w = plane.width + 1;
  const ax = Math.max(0, Math.min(plane.width, Math.round(x0)));
  const bx = Math.max(0, Math.min(plane.width, Math.round(x1)));
  const ay = Math.max(0, Math.min(plane.height, Math.round(y0)));
  const by = Math.max(0, Math.min(plane.height, Math.round(y1)));
  if (bx <= ax || by <= ay) return { sum: 0, area: 0 };
  const t = plane.integral;
  return { sum: t[by * w + bx]! - t[ay * w + bx]! - t[by * w + ax]! + t[ay * w + ax]!, area: (bx - ax) * (by - ay) };
}

const mean = (s: { sum: number; area: number }) => (s.area > 0 ? s.sum / s.area : NaN);

/**
 * Dark blobs at every scale: the centre box (side 2r) against the four sides of the ring around it
 * (out to 2r). The weakest side must still be clearly brighter, which rejects dark edges and stripes.
 */
function findDarkBlobs(plane: Plane): Blob[] {
  const { width, height, luma } = plane;
  const found: Blob[] = [];
  const maxRadius = Math.min(width, height) / 10;
  for (let radius = 1.5; radius <= maxRadius; radius *= 1.25) {
    const step = Math.max(1, Math.round(radius / 2));
    const ring = 2 * radius;
    for (let y = Math.ceil(ring); y < height - ring; y += step) {
      for (let x = Math.ceil(ring); x < width - ring; x += step) {
        const centre = mean(boxSum(plane, x - radius, y - radius, x + radius, y + radius));
        const sides = [
          mean(boxSum(plane, x - ring, y - ring, x + ring, y - radius)),
          mean(boxSum(plane, x - ring, y + radius, x + ring, y + ring)),
          mean(boxSum(plane, x - ring, y - radius, x - radius, y + radius)),
          mean(boxSum(plane, x + radius, y - radius, x + ring, y + radius)),
        ];
        const weakest = Math.min(...sides) - centre;
        const contrast = sides.reduce((a, b) => a + b, 0) / 4 - centre;
        if (contrast < 22 || weakest < 0.45 * contrast || centre > 0.72 * (contrast + centre)) continue;
        found.push({ x, y, radius, contrast, darkness: centre, highlight: false, score: contrast * (0.5 + weakest / contrast / 2) });
      }
    }
  }
  // Strongest first; a blob suppresses weaker ones centred inside it (the same blob at another scale).
  found.sort((a, b) => b.score - a.score);
  const kept: Blob[] = [];
  for (const blob of found) {
    if (kept.some((k) => Math.hypot(k.x - blob.x, k.y - blob.y) < Math.max(k.radius, blob.radius) * 1.2)) continue;
    kept.push(blob);
    if (kept.length >= 150) break;
  }
  for (const blob of kept) {
    let brightest = 0;
    const r = Math.ceil(blob.radius * 0.8);
    for (let y = Math.max(0, Math.round(blob.y) - r); y <= Math.min(height - 1, Math.round(blob.y) + r); y++) {
      for (let x = Math.max(0, Math.round(blob.x) - r); x <= Math.min(width - 1, Math.round(blob.x) + r); x++) brightest = Math.max(brightest, luma[y * width + x]!);
    }
    // A catch-light is brighter than the fur around the eye, not merely than the pupil.
    blob.highlight = brightest > Math.max(140, blob.darkness + blob.contrast + 30);
  }
  return kept;
}

/** Bilinear luma at (x, y), clamped to the plane. */
function sample(plane: Plane, x: number, y: number): number {
  const cx = Math.max(0, Math.min(plane.width - 1.001, x));
  const cy = Math.max(0, Math.min(plane.height - 1.001, y));
  const x0 = Math.floor(cx);
  const y0 = Math.floor(cy);
  const fx = cx - x0;
  const fy = cy - y0;
  const i = y0 * plane.width + x0;
  const l = plane.luma;
  return (l[i]! * (1 - fx) + l[i + 1]! * fx) * (1 - fy) + (l[i + plane.width]! * (1 - fx) + l[i + plane.width + 1]! * fx) * fy;
}

/** Pearson correlation of two equally long series; 0 when either is flat. */
function correlation(p: number[], q: number[]): number {
  const n = p.length;
  const mp = p.reduce((a, b) => a + b, 0) / n;
  const mq = q.reduce((a, b) => a + b, 0) / n;
  let num = 0;
  let dp = 0;
  let dq = 0;
  for (let i = 0; i < n; i++) {
    num += (p[i]! - mp) * (q[i]! - mq);
    dp += (p[i]! - mp) ** 2;
    dq += (q[i]! - mq) ** 2;
  }
  return dp > 0 && dq > 0 ? num / Math.sqrt(dp * dq) : 0;
}

/**
 * Mirror symmetry of the face between two eye candidates: the luma on one side of the axis against
 * the mirrored other side, over the eyes and the muzzle below them (coordinates in eye distances,
 * along the eye line u and down the face v). A pet's face, even turned a little, mirrors far better
 * than two unrelated dark spots.
 */
function mirrorSymmetry(plane: Plane, a: Blob, b: Blob, region: { u: number; top: number; bottom: number }): number {
  const d = Math.hypot(b.x - a.x, b.y - a.y);
  const ex = (b.x - a.x) / d;
  const ey = (b.y - a.y) / d;
  const midX = (a.x + b.x) / 2;
  const midY = (a.y + b.y) / 2;
  const left: number[] = [];
  const right: number[] = [];
  const steps = 12;
  for (let j = 0; j <= 2 * steps; j++) {
    const v = region.top + ((region.bottom - region.top) * j) / (2 * steps);
    for (let i = 1; i <= steps; i++) {
      const u = (region.u * i) / steps;
      const at = (uu: number) => sample(plane, midX + (uu * ex - v * ey) * d, midY + (uu * ey + v * ex) * d);
      left.push(at(-u));
      right.push(at(u));
    }
  }
  return correlation(left, right);
}

interface Candidate {
  eyes: [Blob, Blob];
  nose: Blob | null;
  score: number;
  symmetry: number;
  eyesAlike: number;
  faceAlike: number;
}

/** Scores two blobs as the eyes (a left of b), with the best nose below them; undefined when implausible. */
function scorePair(plane: Plane, blobs: Blob[], a: Blob, b: Blob): Candidate | undefined {
  const r = (a.radius + b.radius) / 2;
  const d = Math.hypot(b.x - a.x, b.y - a.y);
  const sizeRatio = Math.max(a.radius, b.radius) / Math.min(a.radius, b.radius);
  const tilt = Math.abs(Math.atan2(b.y - a.y, b.x - a.x));
  if (sizeRatio > 3 || d < 2.5 * r || d > 20 * r || d < MIN_EYE_DISTANCE || tilt > Math.PI / 3) return undefined;
  if (Math.abs(a.darkness - b.darkness) > 60) return undefined;
  // Unit vectors along the eye line and down the face (perpendicular, pointing down the image).
  const ex = (b.x - a.x) / d;
  const ey = (b.y - a.y) / d;
  const [nx, ny] = [-ey, ex];
  const midX = (a.x + b.x) / 2;
  const midY = (a.y + b.y) / 2;
  let nose: Blob | null = null;
  let noseScore = 0;
  for (const c of blobs) {
    if (c === a || c === b) continue;
    const along = ((c.x - midX) * nx + (c.y - midY) * ny) / d;
    const across = ((c.x - midX) * ex + (c.y - midY) * ey) / d;
    if (along < 0.25 || along > 1.5 || Math.abs(across) > 0.6 || c.radius < 0.2 * r || c.radius > 4 * r) continue;
    const s = c.score * (1 - Math.abs(across));
    if (s > noseScore) {
      noseScore = s;
      nose = c;
    }
  }
  const eyeScore = (Math.min(a.score, b.score) + 0.3 * Math.max(a.score, b.score)) * (1 + 0.2 * (Number(a.highlight) + Number(b.highlight)));
  const eyesAlike = mirrorSymmetry(plane, a, b, { u: 0.75, top: -0.3, bottom: 0.3 });
  const faceAlike = mirrorSymmetry(plane, a, b, { u: 0.75, top: -0.4, bottom: 1.2 });
  const symmetry = Math.max(0, (eyesAlike + faceAlike) / 2);
  // Specks of a few pixels (fur tips, drawn lines) have contrast too; eyes of a usable face are larger.
  const sizeWeight = Math.sqrt(Math.min(1, r / 4));
  const score = (eyeScore + (nose ? 0.6 * noseScore : 0)) * symmetry * sizeWeight * (nose ? 1 : 0.6);
  return { eyes: [a, b], nose, score, symmetry, eyesAlike, faceAlike };
}

/** Every eye pair scored with its best nose below; the best arrangement wins. */
function bestFace(plane: Plane, blobs: Blob[]): Candidate | undefined {
  let best: Candidate | undefined;
  for (const a of blobs) {
    for (const b of blobs) {
      if (a.x >= b.x) continue;
      const candidate = scorePair(plane, blobs, a, b);
      if (candidate && (!best || candidate.score > best.score)) best = candidate;
    }
  }
  return best;
}

/**
 * Finds the pet's face. Coordinates come back in pixels of `image`; null-like DetectionFailure when
 * nothing in the photo is arranged like a pet's face.
 */
export function detectPetFace(image: RgbImage): PetFace | DetectionFailure {
  const { plane, scale } = toPlane(image);
  const blobs = findDarkBlobs(plane);
  const face = bestFace(plane, blobs);
  if (!face) return new DetectionFailure('no pair of eyes found');
  const [a, b] = face.eyes;
  const d = Math.hypot(b.x - a.x, b.y - a.y);
  const ex = (b.x - a.x) / d;
  const ey = (b.y - a.y) / d;
  const mid: Point = [(a.x + b.x) / 2, (a.y + b.y) / 2];
  // The face axis runs from the eyes' midpoint through the nose (a turned head bends it sideways).
  let axis: Point = [-ey, ex];
  let nose: Point;
  if (face.nose) {
    const len = Math.hypot(face.nose.x - mid[0], face.nose.y - mid[1]);
    axis = [(face.nose.x - mid[0]) / len, (face.nose.y - mid[1]) / len];
    nose = [face.nose.x, face.nose.y];
  } else {
    nose = [mid[0] + axis[0] * 0.6 * d, mid[1] + axis[1] * 0.6 * d];
  }
  const mouth: Point = [nose[0] + axis[0] * MOUTH_BELOW_NOSE * d, nose[1] + axis[1] * MOUTH_BELOW_NOSE * d];
  const chin: Point = [mouth[0] + axis[0] * CHIN_BELOW_MOUTH * d, mouth[1] + axis[1] * CHIN_BELOW_MOUTH * d];
  const half = 0.3 * d;
  const corners: [Point, Point] = [
    [mouth[0] - ex * half, mouth[1] - ey * half],
    [mouth[0] + ex * half, mouth[1] + ey * half],
  ];
  const confidence = MAX_CONFIDENCE * Math.min(1, face.score / (2 * MIN_SCORE));
  if (face.score < MIN_SCORE) return new DetectionFailure('nothing in the photo is arranged like a pet face (eyes with a nose below)');
  const pts = [[a.x, a.y], [b.x, b.y], nose, mouth, chin] as Point[];
  const xs = pts.map((p) => p[0]);
  const ys = pts.map((p) => p[1]);
  const left = Math.min(...xs) - 0.5 * d;
  const top = Math.min(...ys) - 0.7 * d;
  const toImage = (p: Point): Point => [p[0] / scale, p[1] / scale];
  return {
    confidence,
    eyes: [toImage([a.x, a.y]), toImage([b.x, b.y])],
    nose: toImage(nose),
    mouth: toImage(mouth),
    mouthCorners: [toImage(corners[0]), toImage(corners[1])],
    chin: toImage(chin),
    head: { left: left / scale, top: top / scale, width: (Math.max(...xs) + 0.5 * d - left) / scale, height: (Math.max(...ys) + 0.2 * d - top) / scale },
    method: face.nose ? 'classical: eye pair and nose' : 'classical: eye pair, nose estimated',
  };
}

export const classicalFaceDetector: FaceDetector = {
  name: 'classical',
  async detect(image) {
    return detectPetFace(image);
  },
};
