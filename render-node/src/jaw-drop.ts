import { boundsOf, type FaceAxes, type Rect } from './face-frame.ts';
import { interiorColor, type MouthColors } from './mouth-interior.ts';
import { eyeDistance, eyeMidpoint, type PetFace, type Point } from './pet-face.ts';
import { smoothstep, type PhotoSampler } from './photo-sampler.ts';
import { JAW, jawOpening, mouthKindOf, OPEN_IN_PHOTO, type JawProportions, type MouthKind } from './species-rig.ts';

/** One frame's jaw: how far it drops and the shape of the opening, in output pixels. */
interface JawMotion {
  drop: number;
  lift: number;
  /** Half width of the opening on the face's left (-u) and right (+u) of the mouth point. */
  openingLeft: number;
  openingRight: number;
  jawInnerLeft: number;
  jawInnerRight: number;
  jawEdgeLeft: number;
  jawEdgeRight: number;
  blendEnd: number;
  fadeStart: number;
  jawEnd: number;
  rim: number;
}

/**
 * How much a turned head narrows its mouth on the snout's side: the nose's offset from the eyes, across
 * the face, in face lengths, at which a face counts as fully in profile.
 */
const PROFILE_NOSE_OFFSET = 0.55;

/**
 * One side of the mouth: scales of its opening and its pull, and how far its lips' profile has turned from an
 * ellipse's to a wedge's (0-1: straight to the corner, a jaw hinged there, as a rodent's side shows in profile).
 */
type Side = { opening: number; edge: number; wedge: number };

/** The steepest the jaw's pull may fall off below the chin (its slope; 1 folds the fur). */
const NO_FOLD = 0.8;

/** A rodent's whisker pads reach their lift over this share of the upper lift's reach above the mouth line. */
const PAD_RISE = 0.35;

/** How far a face is turned (0 frontal … 1 profile) and to which side its snout points (-1 left, +1 right along `right`). */
export function turnOf(face: Pick<PetFace, 'eyes' | 'nose'>, right: Point, length: number): { turn: number; snout: number } {
  const eyeMid = eyeMidpoint(face);
  const offset = (face.nose[0] - eyeMid[0]) * right[0] + (face.nose[1] - eyeMid[1]) * right[1];
  return { turn: Math.min(1, Math.abs(offset) / (PROFILE_NOSE_OFFSET * length)), snout: offset < 0 ? -1 : 1 };
}

/**
 * A dropping jaw (muzzles and rodents): the lower jaw and chin are pulled down by a smooth displacement
 * field whose inverse is solved per pixel, the photo sampled with Catmull-Rom so the pet's own fur moves
 * and stays sharp, and the gap between the lips filled with the species' mouth. A turned face opens
 * towards its visible cheek, hinged at that corner: on the snout's side the opening and the pull stop
 * at the head's outline. A mouth already open in the photo is not drawn again: its own opening
 * stretches with the voice and closes partly in silence.
 */
export class JawDrop {
  readonly rect: Rect;
  private readonly mouth: Point;
  private readonly upright: boolean;
  private readonly halfWidth: number;
  private readonly jaw: number;
  /** Depths below the mouth line where the lips' shape has become the whole jaw's, where the pull starts to fade, and where it ends. */
  private readonly blendEnd: number;
  private readonly fadeStart: number;
  private readonly jawEnd: number;
  private readonly maxDrop: number;
  private readonly upperReach: number;
  /** Per whole pixel of depth below the mouth: how far the jaw's shape has turned from the lips' to the whole jaw's, and how much of the pull is left. */
  private readonly blendAt: Float32Array;
  private readonly fadeAt: Float32Array;
  /** Scale of each side's opening and pull (a turned face narrows the snout's side). */
  private readonly sideLeft: Side;
  private readonly sideRight: Side;
  private readonly color = new Float64Array(3);
  /** Scratch for profiles() (no allocation per pixel). */
  private readonly profile = { across: 0, unit: 0, e: 0, j: 0 };

  private readonly kind: MouthKind;
  private readonly shape: JawProportions;
  /** The photo's mouth is open: no opening is drawn, the jaw only moves. */
  private readonly openInPhoto: boolean;

  private readonly face: PetFace;
  private readonly axes: FaceAxes & { upright: boolean };
  private readonly sampler: PhotoSampler;
  private readonly deformed: Buffer;
  private readonly colors: MouthColors;

  /** `deformed`: the frame buffer the jaw draws into; `length`: the face's length in pixels (eyes to chin). */
  constructor(parts: { face: PetFace; axes: FaceAxes & { upright: boolean }; sampler: PhotoSampler; deformed: Buffer; colors: MouthColors; length: number }) {
    ({ face: this.face, axes: this.axes, sampler: this.sampler, deformed: this.deformed, colors: this.colors } = parts);
    const { face, axes, length } = parts;
    const { down, right } = axes;
    this.kind = mouthKindOf(face.species);
    this.shape = JAW[this.kind];
    this.openInPhoto = Boolean(face.mouthOpen);
    const { shape } = this;
    this.upright = axes.upright;
    // The opening never sits on the nose: a mouth point found at the nose's tip (a rodent in profile) moves down the face;
    // nor further below it than the kind's mouths are (a pug's mouth found on its chin moves up).
    const noseAbove = (face.mouth[0] - face.nose[0]) * down[0] + (face.mouth[1] - face.nose[1]) * down[1];
    const lower = shape.belowNose > 0 ? Math.max(0, shape.belowNose * length - noseAbove) : 0;
    const moved = lower - Math.max(0, noseAbove - shape.mostBelowNose * length);
    this.mouth = [face.mouth[0] + moved * down[0], face.mouth[1] + moved * down[1]];
    const mouth = this.mouth;
    const along = (p: Point, axis: Point) => (p[0] - mouth[0]) * axis[0] + (p[1] - mouth[1]) * axis[1];
    const { share, min, max } = shape.halfWidth;
    this.halfWidth = face.mouthCorners
      ? Math.max(3, Math.hypot(face.mouthCorners[1][0] - face.mouthCorners[0][0], face.mouthCorners[1][1] - face.mouthCorners[0][1]) / 2)
      : Math.min(max * length, Math.max(min * length, share * eyeDistance(face)));
    this.jaw = Math.max(along(face.chin, down), shape.minJaw * length);
    this.maxDrop = Math.min(shape.maxDrop * length, shape.maxDropPerJaw * this.jaw);
    this.upperReach = Math.max(2, shape.noseReach * -along(face.nose, down));
    // A mouth open in the photo: the lower jaw (lower lip, tongue) moves as one piece from just under the opening's
    // middle, the opening itself stretching or closing; drawn openings blend from the lips' shape over the whole jaw.
    this.fadeStart = this.jaw * shape.jawBlend;
    this.blendEnd = this.openInPhoto ? this.jaw * OPEN_IN_PHOTO.band : this.fadeStart;
    // The pull fades over jawFade jaws, or longer for a deep drop on a short jaw: a smoothstep's steepest slope
    // (1.5 × drop / fade) stays under NO_FOLD, so the fur below is squeezed, never folded over itself in a hard edge.
    this.jawEnd = this.fadeStart + Math.max(this.jaw * shape.jawFade, (1.5 * this.maxDrop) / NO_FOLD);
    const depths = Math.ceil(this.jawEnd) + 2;
    this.blendAt = Float32Array.from({ length: depths }, (_, v) => smoothstep(0, this.blendEnd, v));
    this.fadeAt = Float32Array.from({ length: depths }, (_, v) => 1 - smoothstep(this.fadeStart, this.jawEnd, v));

    // A turned face: the snout's side of the opening shrinks towards the outline (just past the nose), the cheek's side widens a little.
    const { turn, snout } = turnOf(face, right, length);
    const outline = Math.abs(along(face.nose, right)) + (0.1 + 0.9 * (1 - turn)) * length;
    const snoutSide = {
      opening: Math.min(1 - 0.7 * turn, (0.6 * outline) / this.halfWidth),
      edge: Math.min(1 - 0.6 * turn, outline / (shape.jawEdge * this.halfWidth)),
      wedge: 0,
    };
    const cheekSide = { opening: 1 + (shape.sideReach - 1) * turn, edge: 1, wedge: shape.sideWedge * turn };
    this.sideLeft = snout < 0 ? snoutSide : cheekSide;
    this.sideRight = snout < 0 ? cheekSide : snoutSide;

    const reach = (side: { edge: number }) => shape.jawEdge * this.halfWidth * side.edge * (1 + shape.spread) + 2;
    const lowest = this.jawEnd + this.maxDrop + 2;
    this.rect = boundsOf(axes, [-reach(this.sideLeft), reach(this.sideRight)], [-this.upperReach - 2, lowest], this.mouth);
  }

  /** Draws the jaw at `open` (0-1) and `round` (0-1) into the deformed frame, over the photo restored there. */
  draw(open: number, round: number): void {
    const m = this.motion(open, round);
    if (this.upright) this.drawUpright(m);
    else this.drawTilted(m);
  }

  private motion(open: number, round: number): JawMotion {
    const { halfWidth, shape, sideLeft, sideRight } = this;
    const drop = jawOpening(open, this.face) * this.maxDrop;
    const opening = halfWidth * (1 + shape.spread * open * (1 - round) - shape.pucker * round);
    return {
      drop,
      // The photo's own upper lip stays where it is (only the lower jaw moves).
      lift: this.openInPhoto ? 0 : shape.lift * drop,
      openingLeft: opening * sideLeft.opening,
      openingRight: opening * sideRight.opening,
      jawInnerLeft: shape.jawInner * halfWidth * sideLeft.edge,
      jawInnerRight: shape.jawInner * halfWidth * sideRight.edge,
      jawEdgeLeft: shape.jawEdge * halfWidth * sideLeft.edge,
      jawEdgeRight: shape.jawEdge * halfWidth * sideRight.edge,
      blendEnd: this.blendEnd,
      fadeStart: this.fadeStart,
      jawEnd: this.jawEnd,
      rim: Math.max(1.5, 0.12 * halfWidth),
    };
  }

  /**
   * Into `profile`, at `u` across the mouth: the lips' profile e (the lips' share at the middle, 0 at and
   * beyond a corner), the jaw's j (1 on the jaw, 0 at the cheeks), `across` (0 middle, 1 corner) and one
   * pixel in units of `across`.
   */
  private profiles(m: JawMotion, u: number): void {
    const left = u < 0;
    const opening = left ? m.openingLeft : m.openingRight;
    const across = Math.abs(u) / opening;
    const { profile } = this;
    profile.across = across;
    profile.unit = 1 / opening;
    const wedge = (left ? this.sideLeft : this.sideRight).wedge;
    profile.e = across >= 1 ? 0 : this.shape.lipShare * ((1 - wedge) * Math.pow(1 - across * across, 0.8) + wedge * (1 - across));
    profile.j = 1 - smoothstep(left ? m.jawInnerLeft : m.jawInnerRight, left ? m.jawEdgeLeft : m.jawEdgeRight, Math.abs(u));
  }

  /**
   * Where the lower face's part of a column starts: half-way across a gap; on a mouth open in the photo that closes
   * (the lower lip above the mouth line), at the lower lip, which covers the opening it rises over.
   */
  private static lowerFrom(topLip: number, bottomLip: number): number {
    return Math.min(bottomLip, (topLip + bottomLip) / 2);
  }

  /** How far the lower face moves at depth v below the mouth line, in a column with lip profile e and jaw profile j. */
  private static lowerShift(m: JawMotion, e: number, j: number, v: number): number {
    return m.drop * (e + (j - e) * smoothstep(0, m.blendEnd, v)) * (1 - smoothstep(m.fadeStart, m.jawEnd, v));
  }

  /**
   * The upper lip's depth in the photo that lands at v (above the mouth line), in a column with lip profile e and jaw
   * profile j. Over the opening the lip lifts by the lift × e, fading up the face; a rodent's whisker pads beside it
   * lift too (`padLift` of the lift where the jaw moves, rising from nothing at the mouth line, so the lip line does not
   * tear). Without pads the lift's slope is well under 1 and fixed-point iteration converges; with them, bisection.
   */
  private upperSource(m: JawMotion, e: number, j: number, v: number, topLip: number): number {
    const target = Math.min(v, topLip);
    const pad = Math.max(0, this.shape.padLift * j - e);
    if (pad === 0) {
      let s = Math.min(0, target - topLip);
      for (let i = 0; i < 5; i++) s = Math.min(0, target + m.lift * e * (1 - smoothstep(0, this.upperReach, -s)));
      return s;
    }
    const lifted = (s: number) => s - m.lift * (e + pad * smoothstep(0, PAD_RISE * this.upperReach, -s)) * (1 - smoothstep(0, this.upperReach, -s)) - target;
    let low = target;
    let high = Math.min(0, target + m.lift * (e + pad));
    let lowError = lifted(low);
    let highError = lifted(high);
    for (let i = 0; i < 6 && highError - lowError > 0.05; i++) {
      const middle = (low + high) / 2;
      const error = lifted(middle);
      if (error > 0) [high, highError] = [middle, error];
      else [low, lowError] = [middle, error];
    }
    return highError - lowError > 1e-6 ? Math.min(0, low - (lowError * (high - low)) / (highError - lowError)) : low;
  }

  /**
   * Upright faces (the jaw drops straight down the image): each column maps monotonically, so its
   * inverse comes from one scan down the column, and samples are vertical (4 taps).
   */
  private drawUpright(m: JawMotion): void {
    const { mouth, blendAt, fadeAt, deformed, profile } = this;
    const { width, height } = this.axes;
    const left = Math.max(this.rect.left, Math.ceil(mouth[0] - m.jawEdgeLeft));
    const right = Math.min(this.rect.right, Math.floor(mouth[0] + m.jawEdgeRight) + 1);
    const columns = Math.max(0, right - left);
    const stride = width * 3;
    const last = blendAt.length - 1;
    // Per column: the lip profile e, the jaw profile j, and the scan state (source depth k and where k and k+1 land).
    const lip = new Float64Array(columns);
    const jawProfile = new Float64Array(columns);
    const across = new Float64Array(columns);
    const unit = new Float64Array(columns);
    const depth = new Int32Array(columns);
    const landK = new Float64Array(columns);
    const landNext = new Float64Array(columns);
    for (let i = 0; i < columns; i++) {
      this.profiles(m, left + i - mouth[0]);
      const { e, j } = profile;
      across[i] = profile.across;
      unit[i] = profile.unit;
      lip[i] = e;
      jawProfile[i] = j;
      landK[i] = m.drop * e;
      landNext[i] = 1 + m.drop * (e + (j - e) * blendAt[1]!) * fadeAt[1]!;
    }
    const firstRow = Math.max(0, Math.ceil(mouth[1] - this.upperReach));
    const lastRow = Math.min(height - 1, Math.floor(mouth[1] + m.jawEnd + Math.max(0, m.drop)));
    for (let y = firstRow; y <= lastRow; y++) {
      const v = y - mouth[1];
      for (let i = 0; i < columns; i++) {
        const e = lip[i]!;
        const bottomLip = m.drop * e;
        const topLip = -m.lift * e;
        const lower = v >= JawDrop.lowerFrom(topLip, bottomLip);
        let s: number;
        if (lower) {
          const target = v > bottomLip ? v : bottomLip;
          const j = jawProfile[i]!;
          let k = depth[i]!;
          while (landNext[i]! <= target) {
            k++;
            landK[i] = landNext[i]!;
            const at = k + 1 < last ? k + 1 : last;
            landNext[i] = k + 1 + m.drop * (e + (j - e) * blendAt[at]!) * fadeAt[at]!;
          }
          depth[i] = k;
          const span = landNext[i]! - landK[i]!;
          s = k + (target - landK[i]!) / (span > 1e-6 ? span : 1e-6);
        } else {
          s = this.upperSource(m, e, jawProfile[i]!, v, topLip);
        }
        const x = left + i;
        // Rows near the lips get the full treatment (rim, opening); the rest only move.
        if (v >= topLip - m.rim - 1 && v <= bottomLip + m.rim + 1) {
          this.paintJaw(m, y * stride + x * 3, across[i]!, unit[i]!, e, v, s, lower, x, mouth[1] + s, true);
          continue;
        }
        const moved = v - s;
        if (moved < 0.01 && moved > -0.01) continue;
        this.sampler.sampleColumn(x, mouth[1] + s, deformed, y * stride + x * 3, 1);
      }
    }
  }

  /** Tilted faces: the inverse is solved per pixel along the face's own axes and sampled in 2D (16 taps). */
  private drawTilted(m: JawMotion): void {
    const { mouth, profile } = this;
    const { right, down, width } = this.axes;
    const { left, top, right: rectRight, bottom } = this.rect;
    for (let y = top; y < bottom; y++) {
      for (let x = left; x < rectRight; x++) {
        const dx = x - mouth[0];
        const dy = y - mouth[1];
        const u = dx * right[0] + dy * right[1];
        const v = dx * down[0] + dy * down[1];
        if (v < -this.upperReach || v > m.jawEnd + Math.max(0, m.drop)) continue;
        this.profiles(m, u);
        const { across, e, j } = profile;
        if (e === 0 && j === 0) continue;
        const bottomLip = m.drop * e;
        const topLip = -m.lift * e;
        const lower = v >= JawDrop.lowerFrom(topLip, bottomLip);
        let s: number;
        if (lower) {
          // s + shift(s) rises with s (the skin beside the mouth may stretch steeply), so bisect, then interpolate.
          const target = Math.max(v, bottomLip);
          let low = Math.max(0, target - Math.max(0, m.drop));
          let high = target + Math.max(0, -m.drop);
          let lowError = low + JawDrop.lowerShift(m, e, j, low) - target;
          let highError = high + JawDrop.lowerShift(m, e, j, high) - target;
          for (let i = 0; i < 6 && highError - lowError > 0.05; i++) {
            const middle = (low + high) / 2;
            const error = middle + JawDrop.lowerShift(m, e, j, middle) - target;
            if (error > 0) [high, highError] = [middle, error];
            else [low, lowError] = [middle, error];
          }
          s = highError - lowError > 1e-6 ? low - (lowError * (high - low)) / (highError - lowError) : low;
        } else {
          s = this.upperSource(m, e, j, v, topLip);
        }
        this.paintJaw(m, (y * width + x) * 3, across, profile.unit, e, v, s, lower, mouth[0] + u * right[0] + s * down[0], mouth[1] + u * right[1] + s * down[1], false);
      }
    }
  }

  /**
   * One pixel of the jaw at depth v (face units below the mouth line) whose fur comes from depth s
   * (photo position sx, sy): the lip rim darkened, and inside the opening the shaded mouth.
   */
  private paintJaw(m: JawMotion, o: number, across: number, unit: number, e: number, v: number, s: number, lower: boolean, sx: number, sy: number, vertical: boolean): void {
    const bottomLip = m.drop * e;
    const topLip = -m.lift * e;
    const gap = bottomLip - topLip;
    const outside = lower ? v - bottomLip : topLip - v;
    let gain = 1;
    if (e > 0 && !this.openInPhoto && outside >= 0 && outside < m.rim) gain = 1 - (lower ? 0.5 : 0.35) * e * Math.min(1, gap / 6) * (1 - outside / m.rim);
    // Antialiased over about a pixel and a half, so the lips' edge is soft like the photo's.
    const coverage = e > 0 && gap > 0.3 ? Math.min(1, Math.max(0, (Math.min(v - topLip, bottomLip - v) + 0.75) / 1.5)) : 0;
    if (Math.abs(s - v) < 0.01 && gain === 1 && coverage === 0) return;
    const { deformed, color } = this;
    if (vertical) this.sampler.sampleColumn(sx, sy, deformed, o, gain);
    else this.sampler.sample(sx, sy, deformed, o, gain);
    if (coverage === 0) return;
    // A mouth open in the photo shows its own interior, stretched from the opening's middle line: nothing is drawn.
    if (this.openInPhoto) return;
    interiorColor(this.kind, this.colors, across, Math.min(1, Math.max(0, (v - topLip) / gap)), gap, unit, color);
    deformed[o] = deformed[o]! + (color[0]! - deformed[o]!) * coverage + 0.5;
    deformed[o + 1] = deformed[o + 1]! + (color[1]! - deformed[o + 1]!) * coverage + 0.5;
    deformed[o + 2] = deformed[o + 2]! + (color[2]! - deformed[o + 2]!) * coverage + 0.5;
  }
}
