import { BeakHinge, beakHingeFits } from './beak-hinge.ts';
import { browOf, drawBrowLift, type Brow } from './brow-lift.ts';
import { drawOverlay, type Overlay } from './compositor.ts';
import { drawBlink, eyelidsOf, type Eyelid } from './eyelids.ts';
import type { FaceAxes, Rect } from './face-frame.ts';
import { HeadMotion } from './head-motion.ts';
import type { RgbImage } from './image-decoder.ts';
import { JawDrop, turnOf } from './jaw-drop.ts';
import { sampleMouthColors } from './mouth-interior.ts';
import { eyeDistance, eyeMidpoint, faceLength, type PetFace, type Point } from './pet-face.ts';
import { PhotoSampler } from './photo-sampler.ts';
import { mouthKindOf, type MouthKind } from './species-rig.ts';

/** One frame's expression. Head offsets are in output pixels. */
export interface RigPose {
  /** 0 closed … 1 wide open. */
  open: number;
  /** 0 spread (ee, ah) … 1 rounded (oo, oh). */
  round: number;
  /** 0 eyes open … 1 closed. */
  blink: number;
  headX: number;
  headY: number;
  /** 0 … 1 the brows' full lift on a high note (brow-lift.ts). */
  brow?: number;
  /** The head's turn, radians clockwise on screen (a lean into a phrase). */
  tilt?: number;
  /** Where the top of the head (the ears) is: the head's pose a moment ago, so the ears trail it. Default: with the head. */
  earX?: number;
  earY?: number;
  earTilt?: number;
}

/**
 * Jaw poses are drawn at these steps (0.6 px of a 30 px drop: finer than the eye follows at 25 fps)
 * and kept, up to maxBytes, so a pose seen before costs a copy.
 */
const JAW_CACHE = { openSteps: 48, roundSteps: 4, maxBytes: 128 * 1024 * 1024 } as const;
/** sin 15°. */
const UPRIGHT_TILT = 0.26;

/**
 * The face's axes in the frame: `down` from the eyes towards the chin. A turned head's eye-to-chin line
 * leans towards its snout; its jaw opens across the mouth line (eyes to nose) instead, so `down` turns
 * half-way there as the face turns to profile.
 */
function axesOf(face: PetFace, width: number, height: number, length: number): FaceAxes & { upright: boolean } {
  const eyeMid = eyeMidpoint(face);
  const toChin = Math.hypot(face.chin[0] - eyeMid[0], face.chin[1] - eyeMid[1]);
  let down: Point = toChin > 1 ? [(face.chin[0] - eyeMid[0]) / toChin, (face.chin[1] - eyeMid[1]) / toChin] : [0, 1];
  const { turn } = turnOf(face, [down[1], -down[0]], length);
  const toNose: Point = [face.nose[0] - eyeMid[0], face.nose[1] - eyeMid[1]];
  const noseDistance = Math.hypot(...toNose);
  if (turn > 0 && noseDistance > 1) {
    // Of the two normals to the mouth line, the one on the chin's side.
    let across: Point = [-toNose[1] / noseDistance, toNose[0] / noseDistance];
    if (across[0] * down[0] + across[1] * down[1] < 0) across = [-across[0], -across[1]];
    const blended: Point = [down[0] * (1 - turn / 2) + across[0] * (turn / 2), down[1] * (1 - turn / 2) + across[1] * (turn / 2)];
    const norm = Math.hypot(...blended);
    if (norm > 1e-6) down = [blended[0] / norm, blended[1] / norm];
  }
  // A head tilted less than UPRIGHT_TILT drops its jaw straight down the image: the fast, vertical-only path.
  const upright = Math.abs(down[0]) < UPRIGHT_TILT && down[1] > 0;
  if (upright) down = [0, 1];
  return { down, right: [down[1], -down[0]], width, height, upright };
}

/**
 * Whether a beak points across the face (a bird seen from the side: it opens by turning about its gape in
 * the picture) rather than down it (seen from the front or above: the lower mandible drops like a jaw).
 */
function beakAcross(face: PetFace, axes: FaceAxes): boolean {
  const beak: Point = [face.nose[0] - face.mouth[0], face.nose[1] - face.mouth[1]];
  return Math.abs(beak[0] * axes.right[0] + beak[1] * axes.right[1]) > Math.abs(beak[0] * axes.down[0] + beak[1] * axes.down[1]) && beakHingeFits(face);
}

/**
 * Animates a still photo of a pet's face at output resolution with the mouth of its kind (README,
 * "Mouths by species"): a muzzle or rodent jaw that drops (jaw-drop.ts), or a beak that hinges
 * (beak-hinge.ts); eyelids close by pulling the fur above each eye down; the head moves by whole
 * pixels (fur is never resampled for head motion, so it stays as sharp as the photo). Only the
 * regions that change are recomputed each frame.
 */
export class FaceRig {
  readonly width: number;
  readonly height: number;
  readonly kind: MouthKind;
  private readonly source: Buffer;
  private readonly deformed: Buffer;
  /** The watermark, when it overlaps the head (else it is part of `still`). */
  private readonly overlay: Overlay | undefined;
  /** What the frame shows outside the head's rectangle: the photo, with a watermark clear of the head blended in once. */
  private readonly still: Buffer;
  /** Output buffers that already hold `still` outside the head (by memory and offset): only the head is written again. */
  private readonly holdingStill = new WeakMap<ArrayBufferLike, Set<number>>();
  private readonly axes: FaceAxes;
  private readonly sampler: PhotoSampler;
  private readonly jaw: BeakHinge | JawDrop;
  /** A mouth open in the photo: closed poses are drawn too (it closes partly). */
  private readonly openInPhoto: boolean;
  private readonly eyes: Eyelid[];
  private readonly brows: Brow[];
  /** The largest brow rectangle's pixels, as they were before its lift. */
  private readonly browScratch: Buffer;
  private readonly head: HeadMotion;
  private dirty: Rect[] = [];
  /** Drawn jaws by quantised pose: a song revisits the same openings again and again. */
  private readonly jawPatches = new Map<number, Buffer>();

  constructor(options: { frame: RgbImage; face: PetFace; overlay?: Overlay; blinks: boolean }) {
    const { frame, face } = options;
    this.width = frame.width;
    this.height = frame.height;
    this.source = Buffer.from(frame.data);
    this.deformed = Buffer.from(frame.data);
    this.sampler = new PhotoSampler(this.source, this.width, this.height);
    this.kind = mouthKindOf(face.species);

    const length = Math.max(4, faceLength(face));
    const axes = axesOf(face, this.width, this.height, length);
    this.axes = axes;
    const colors = sampleMouthColors(this.source, this.width, this.height, face.mouth, length);
    this.openInPhoto = Boolean(face.mouthOpen);
    this.jaw = this.kind === 'beak' && beakAcross(face, axes)
      ? new BeakHinge(face, this.sampler, this.deformed)
      : new JawDrop({ face, axes, sampler: this.sampler, deformed: this.deformed, colors, length });
    // Eyes placed by proportions around a tapped mouth are not drawn on.
    this.eyes = options.blinks && !face.eyesEstimated ? eyelidsOf(face, axes) : [];
    this.brows = this.eyes.map((eye) => browOf(eye, axes));
    this.browScratch = Buffer.alloc(3 * Math.max(0, ...this.brows.map(({ rect }) => (rect.right - rect.left) * (rect.bottom - rect.top))));
    const moving = [this.jaw.rect, ...this.eyes.map((eye) => eye.rect), ...this.brows.map((brow) => brow.rect)];
    this.head = new HeadMotion({ axes, eyeMid: eyeMidpoint(face), length, eyeDistance: eyeDistance(face), moving });
    const mark = options.overlay;
    const { rect } = this.head;
    const clear = mark && (mark.left >= rect.right || mark.left + mark.width <= rect.left || mark.top >= rect.bottom || mark.top + mark.height <= rect.top);
    this.overlay = clear ? undefined : mark;
    this.still = this.source;
    if (mark && clear) {
      this.still = Buffer.from(this.source);
      drawOverlay(this.still, this.width, mark);
    }
  }

  /**
   * Writes one frame (width×height×3 RGB) into `out`. An `out` this rig wrote before must hold that frame
   * still (as the render loop's frame slots do): only the head is written into it again.
   */
  render(pose: RigPose, out: Buffer): void {
    for (const rect of this.dirty) this.restore(rect);
    this.dirty = [];
    const openStep = Math.round(Math.min(1, Math.max(0, pose.open)) * JAW_CACHE.openSteps);
    // A closed mouth is the photo itself, unless the photo's own open mouth closes partly in silence.
    if (openStep > 0 || this.openInPhoto) {
      // A beak has no vowel shapes: one pose per opening.
      const roundStep = this.kind === 'beak' ? 0 : Math.round(Math.min(1, Math.max(0, pose.round)) * JAW_CACHE.roundSteps);
      const key = openStep * (JAW_CACHE.roundSteps + 1) + roundStep;
      const rect = this.jaw.rect;
      const patch = this.jawPatches.get(key);
      if (patch) this.copyRect(rect, patch, 'in');
      else {
        this.jaw.draw(openStep / JAW_CACHE.openSteps, roundStep / JAW_CACHE.roundSteps);
        const bytes = (rect.right - rect.left) * (rect.bottom - rect.top) * 3;
        if ((this.jawPatches.size + 1) * bytes <= JAW_CACHE.maxBytes) {
          const saved = Buffer.allocUnsafe(bytes);
          this.copyRect(rect, saved, 'out');
          this.jawPatches.set(key, saved);
        }
      }
      this.dirty.push(rect);
    }
    if (pose.blink > 0.02) {
      for (const eye of this.eyes) {
        drawBlink(eye, pose.blink, this.axes, this.sampler, this.deformed);
        this.dirty.push(eye.rect);
      }
    }
    // After the lids: a narrowed eye under a lifted brow keeps both.
    if ((pose.brow ?? 0) > 0.02) {
      for (const brow of this.brows) {
        drawBrowLift(brow, pose.brow!, this.axes, this.deformed, this.browScratch);
        this.dirty.push(brow.rect);
      }
    }
    let offsets = this.holdingStill.get(out.buffer);
    if (!offsets) this.holdingStill.set(out.buffer, (offsets = new Set()));
    if (!offsets.has(out.byteOffset)) {
      this.head.writeStill(this.still, out);
      offsets.add(out.byteOffset);
    }
    const tilt = pose.tilt ?? 0;
    const ears = { x: pose.earX ?? pose.headX, y: pose.earY ?? pose.headY, tilt: pose.earTilt ?? tilt };
    this.head.write(this.deformed, { x: pose.headX, y: pose.headY, tilt, ears }, out);
    if (this.overlay) drawOverlay(out, this.width, this.overlay);
  }

  /** Copies `rect` of the deformed frame out to `patch` (rows packed), or the patch back in. */
  private copyRect(rect: Rect, patch: Buffer, direction: 'in' | 'out'): void {
    const rowBytes = (rect.right - rect.left) * 3;
    for (let y = rect.top; y < rect.bottom; y++) {
      const start = (y * this.width + rect.left) * 3;
      const packed = (y - rect.top) * rowBytes;
      if (direction === 'out') this.deformed.copy(patch, packed, start, start + rowBytes);
      else patch.copy(this.deformed, start, packed, packed + rowBytes);
    }
  }

  private restore(rect: Rect): void {
    const rowBytes = (rect.right - rect.left) * 3;
    for (let y = rect.top; y < rect.bottom; y++) {
      const start = (y * this.width + rect.left) * 3;
      this.source.copy(this.deformed, start, start, start + rowBytes);
    }
  }
}
