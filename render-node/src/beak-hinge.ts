import type { Rect } from './face-frame.ts';
import { eyeMidpoint, type PetFace, type Point } from './pet-face.ts';
import { BEAK_INSIDE, BEAK_TONGUE } from './mouth-interior.ts';
import type { PhotoSampler} from './photo-sampler.ts';
import { smoothstep } from './photo-sampler.ts';
import { BEAK, jawOpening } from './species-rig.ts';


/** Each inverse of the soft warp takes this many fixed-point steps (its slope is well under 1). */
const WARP_STEPS = 4;

/** A beak seen from the side, in the photo: its gape, its length (gape to tip), and its axes. */
type BeakLine = {
  gape: Point;
  length: number;
  /** From the gape towards the tip. */
  along: Point;
  /** Across the beak line, towards the lower mandible (the chin's side). */
  across: Point;
  /** How far the chin (the bottom of the lower mandible) lies from the beak line. */
  chinDepth: number;
};

/**
 * Where a beak seen from the side lies: from the tip (`nose`) through the mouth point, leaning a quarter towards
 * the eyes (the gape is below and in front of them), for `gapeShare` of the eye-to-tip distance.
 */
export function beakLine(face: Pick<PetFace, 'eyes' | 'nose' | 'mouth' | 'chin'>): BeakLine {
  const tip = face.nose;
  const eyeMid = eyeMidpoint(face);
  const toEye = Math.max(2, Math.hypot(eyeMid[0] - tip[0], eyeMid[1] - tip[1]));
  const toMouth = Math.hypot(face.mouth[0] - tip[0], face.mouth[1] - tip[1]);
  const lineOf = (p: Point, d: number): Point => [(p[0] - tip[0]) / Math.max(1e-6, d), (p[1] - tip[1]) / Math.max(1e-6, d)];
  const toMouthDir = toMouth > 0.05 * toEye ? lineOf(face.mouth, toMouth) : lineOf(eyeMid, toEye);
  const toEyeDir = lineOf(eyeMid, toEye);
  const blended: Point = [0.75 * toMouthDir[0] + 0.25 * toEyeDir[0], 0.75 * toMouthDir[1] + 0.25 * toEyeDir[1]];
  const norm = Math.hypot(...blended) || 1;
  const length = Math.max(4, Math.min(0.9 * toEye, Math.max(BEAK.gapeShare * toEye, BEAK.minToMouth * toMouth)));
  const gape: Point = [tip[0] + (blended[0] / norm) * length, tip[1] + (blended[1] / norm) * length];
  const along: Point = [-blended[0] / norm, -blended[1] / norm];
  const normal: Point = [-along[1], along[0]];
  const chinSide = (face.chin[0] - gape[0]) * normal[0] + (face.chin[1] - gape[1]) * normal[1];
  return { gape, length, along, across: chinSide >= 0 ? normal : [-normal[0], -normal[1]], chinDepth: Math.abs(chinSide) };
}

/**
 * Whether the found points draw a beak that can hinge in the picture: its chin no deeper below the beak line than
 * a lower mandible reaches (BEAK.depth). Points that break this (a tip found on the forehead of a bird whose beak
 * points down) would turn a mandible out of the beak into the background.
 */
export function beakHingeFits(face: Pick<PetFace, 'eyes' | 'nose' | 'mouth' | 'chin'>): boolean {
  const line = beakLine(face);
  return line.chinDepth <= BEAK.depth[1] * line.length;
}

/**
 * A bird's beak opening: the lower mandible turns down about the gape (the corner of the beak, towards
 * the eye) and the upper one lifts a little about the same point. Inside each mandible the photo's own
 * pixels turn rigidly (a beak does not bend); around it the feathers follow with a weight that fades
 * over a band, so there is no seam; between the mandibles a dark, narrow mouth with at most a thin pale
 * tongue. In the beak's own frame `a` runs from the gape to the tip and `b` across it, towards the lower
 * mandible.
 */
export class BeakHinge {
  readonly rect: Rect;
  private readonly gape: Point;
  private readonly along: Point;
  private readonly across: Point;
  /** Gape to tip; the lower mandible's length; the mandibles' depths at the gape; the feathers' band. */
  private readonly length: number;
  private readonly lowerLength: number;
  private readonly lowerDepth: number;
  private readonly upperDepth: number;
  private readonly band: number;
  private readonly pixel = Buffer.alloc(3);
  private readonly face: Pick<PetFace, 'mouthOpen'>;

  constructor(
    face: Pick<PetFace, 'eyes' | 'nose' | 'mouth' | 'chin' | 'mouthOpen'>,
    private readonly sampler: PhotoSampler,
    private readonly target: Buffer,
  ) {
    this.face = face;
    const line = beakLine(face);
    this.length = line.length;
    this.gape = line.gape;
    this.along = line.along;
    this.across = line.across;
    const [shallowest, deepest] = BEAK.depth;
    this.lowerDepth = Math.min(deepest * this.length, Math.max(shallowest * this.length, line.chinDepth));
    this.upperDepth = Math.max(this.lowerDepth, 0.3 * this.length);
    this.lowerLength = BEAK.lowerLength * this.length;
    this.band = 0.4 * this.lowerDepth + 2;

    // Everything a mandible can reach, turned either way, plus the feathers' band.
    const reach = this.length + this.band;
    const corners: Point[] = [];
    for (const angle of [BEAK.maxAngle, jawOpening(0, face) * BEAK.maxAngle, -BEAK.upperShare * BEAK.maxAngle, 0]) {
      for (const [a, b] of [[-this.band, -this.upperDepth - this.band], [reach, -this.upperDepth - this.band], [-this.band, this.lowerDepth + this.band], [reach, this.lowerDepth + this.band]] as const) {
        const c = Math.cos(angle);
        const s = Math.sin(angle);
        corners.push(this.toPixel(a * c - b * s, a * s + b * c));
      }
    }
    this.rect = {
      left: Math.max(0, Math.floor(Math.min(...corners.map((p) => p[0]))) - 2),
      top: Math.max(0, Math.floor(Math.min(...corners.map((p) => p[1]))) - 2),
      right: Math.min(sampler.width, Math.ceil(Math.max(...corners.map((p) => p[0]))) + 3),
      bottom: Math.min(sampler.height, Math.ceil(Math.max(...corners.map((p) => p[1]))) + 3),
    };
  }

  private toPixel(a: number, b: number): Point {
    return [this.gape[0] + a * this.along[0] + b * this.across[0], this.gape[1] + a * this.along[1] + b * this.across[1]];
  }

  /** How much of a mandible's turn the point (a, b) of the photo takes: 1 on the mandible, fading over the band around it. */
  private weight(a: number, b: number, lower: boolean): number {
    const span = lower ? this.lowerLength : this.length;
    const depth = (lower ? this.lowerDepth : this.upperDepth) * Math.sqrt(Math.max(0, 1 - Math.min(1, Math.max(0, a) / span) ** 2));
    const off = lower ? b : -b;
    if (off < 0) return 0;
    return (1 - smoothstep(depth, depth + this.band, off)) * smoothstep(-this.band, 0, a) * (1 - smoothstep(span, span + 0.5 * this.band, a));
  }

  /**
   * Where in the photo the output point (a, b) comes from when the mandible on that side turns by `angle`
   * (its weight times the angle moves each point; the inverse by fixed-point steps from the rigid answer).
   */
  private sourceOf(a: number, b: number, angle: number, lower: boolean): Point {
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    let qa = a * c + b * s;
    let qb = -a * s + b * c;
    for (let i = 0; i < WARP_STEPS; i++) {
      const w = this.weight(qa, qb, lower);
      // p = q + w (R q - q)  =>  q = p - w (R q - q)
      const ra = qa * c - qb * s;
      const rb = qa * s + qb * c;
      qa = a - w * (ra - qa);
      qb = b - w * (rb - qb);
    }
    return [qa, qb];
  }

  /** Draws the beak `open` (0 closed … 1 wide; a beak open in the photo closes partly at 0) into the target frame. */
  draw(open: number): void {
    const opening = jawOpening(open, this.face);
    const lowerAngle = opening * BEAK.maxAngle;
    const upperAngle = -BEAK.upperShare * Math.max(0, opening) * BEAK.maxAngle;
    const { rect, gape, along, across, sampler, pixel, target } = this;
    const width = sampler.width;
    const sinLower = Math.sin(lowerAngle);
    const cosLower = Math.cos(lowerAngle);
    const sinUpper = Math.sin(-upperAngle);
    const cosUpper = Math.cos(-upperAngle);
    for (let y = rect.top; y < rect.bottom; y++) {
      for (let x = rect.left; x < rect.right; x++) {
        const dx = x - gape[0];
        const dy = y - gape[1];
        const a = dx * along[0] + dy * along[1];
        const b = dx * across[0] + dy * across[1];
        // Distances into the gap from the lifted upper edge and from the turned lower one.
        const belowUpper = a * sinUpper + b * cosUpper;
        const aboveLower = a * sinLower - b * cosLower;
        // The lower mandible's side: points its turn brings from below the beak line (the gap comes from above it).
        const lower = b * cosLower - a * sinLower >= 0;
        const angle = lower ? lowerAngle : upperAngle;
        const [qa, qb] = this.sourceOf(a, b, angle, lower);
        const o = (y * width + x) * 3;
        if (Math.abs(qa - a) > 0.01 || Math.abs(qb - b) > 0.01) {
          const [sx, sy] = this.toPixel(qa, qb);
          sampler.sample(sx, sy, target, o, 1);
        }
        if (a <= 0 || lowerAngle - upperAngle <= 0) continue;
        const r = Math.hypot(a, b);
        const coverage = Math.min(1, Math.max(0, Math.min(belowUpper, aboveLower) + 0.5)) * Math.min(1, Math.max(0, this.lowerLength - r + 0.5));
        if (coverage <= 0) continue;
        // Darkest at the gape, a thin pale tongue along the lower mandible where the gap is wide enough to show one.
        const deep = 1 - smoothstep(0, 0.7 * this.lowerLength, r);
        for (let c = 0; c < 3; c++) pixel[c] = BEAK_INSIDE[c]! * (1 - 0.6 * deep);
        const gap = r * Math.sin(lowerAngle - upperAngle);
        if (gap >= 4 && r > 0.25 * this.lowerLength && r < 0.75 * this.lowerLength) {
          const tongue = Math.min(1, Math.max(0, 1.2 - Math.abs(aboveLower - 0.3 * gap))) * 0.8;
          for (let c = 0; c < 3; c++) pixel[c] = pixel[c]! + (BEAK_TONGUE[c]! - pixel[c]!) * tongue;
        }
        for (let c = 0; c < 3; c++) target[o + c] = target[o + c]! + (pixel[c]! - target[o + c]!) * coverage + 0.5;
      }
    }
  }
}
