import { boundsOf, type FaceAxes, type Rect } from './face-frame.ts';
import { eyeDistance, faceLength, type PetFace, type Point } from './pet-face.ts';
import type { PhotoSampler } from './photo-sampler.ts';

/** One eye's lid: the eye's centre and radii along the face's axes, and the pixels a blink touches. */
export interface Eyelid {
  centre: Point;
  rx: number;
  ry: number;
  rect: Rect;
}

/**
 * The lids a blink closes. Both eyes of a face that shows both; of a profile, only the eye on the
 * camera's side (the one farther from the nose along the face: the far eye is hidden behind the
 * snout, and its point is estimated). Eyes placed by proportions around a given mouth get none.
 */
export function eyelidsOf(face: PetFace, axes: FaceAxes): Eyelid[] {
  const length = Math.max(4, faceLength(face));
  const between = eyeDistance(face);
  const lid = (centre: Point, rx: number): Eyelid => {
    const ry = 0.75 * rx;
    return { centre, rx, ry, rect: boundsOf(axes, [-rx - 1, rx + 1], [-3 * ry - 2, ry + 2], centre) };
  };
  const profile = face.view === 'profile' || (face.view === undefined && between < 0.45 * length);
  if (!profile) return face.eyes.map((centre) => lid(centre, Math.min(0.13 * length, Math.max(0.035 * length, 0.2 * between))));
  const fromNose = (eye: Point) => Math.abs((eye[0] - face.nose[0]) * axes.right[0] + (eye[1] - face.nose[1]) * axes.right[1]);
  const near = fromNose(face.eyes[0]) >= fromNose(face.eyes[1]) ? face.eyes[0] : face.eyes[1];
  return [lid(near, 0.07 * length)];
}

/** The upper lid slides down over the eye: the fur above it is stretched down to `blink` of the eye's height, with a dark lash line. */
export function drawBlink(eye: Eyelid, blink: number, axes: FaceAxes, sampler: PhotoSampler, deformed: Buffer): void {
  const { right, down, width } = axes;
  const { centre, rx, ry, rect } = eye;
  const lash = Math.max(1, 0.12 * ry);
  for (let y = rect.top; y < rect.bottom; y++) {
    for (let x = rect.left; x < rect.right; x++) {
      const dx = x - centre[0];
      const dy = y - centre[1];
      const a = dx * right[0] + dy * right[1];
      const b = dx * down[0] + dy * down[1];
      if (Math.abs(a) >= rx) continue;
      const half = ry * Math.sqrt(1 - (a / rx) ** 2);
      const lid = -half + 2 * half * blink;
      const from = -3 * half;
      if (b < from || b >= lid + 1) continue;
      // [from, lid] shows the fur of [from, -half]: the lid's edge is the fur just above the eye.
      const s = b >= lid ? -half : from + ((b - from) * 2 * half) / Math.max(1e-3, lid - from);
      const edge = lid - b;
      const gain = edge < lash ? 1 - 0.5 * blink * (1 - Math.max(0, edge) / lash) : 1;
      const o = (y * width + x) * 3;
      if (b >= lid) {
        // The pixel row just under the lid edge: antialias between lid and eye.
        const cover = 1 - (b - lid);
        const before = [deformed[o]!, deformed[o + 1]!, deformed[o + 2]!];
        sampler.sample(centre[0] + a * right[0] + s * down[0], centre[1] + a * right[1] + s * down[1], deformed, o, gain);
        for (let c = 0; c < 3; c++) deformed[o + c] = before[c]! + (deformed[o + c]! - before[c]!) * cover;
        continue;
      }
      sampler.sample(centre[0] + a * right[0] + s * down[0], centre[1] + a * right[1] + s * down[1], deformed, o, gain);
    }
  }
}
