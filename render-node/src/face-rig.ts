import { drawOverlay, type Overlay } from './compositor.ts';
import type { RgbImage } from './image-decoder.ts';
import { faceLength, type PetFace, type Point } from './pet-face.ts';

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
}

/**
 * Proportions of the rig, in the face's own units: L is the eye-midpoint-to-chin length, hw the
 * mouth's half width. They were chosen by looking at frames of the real pets (README, "Singing").
 */
const RIG = {
  /** Jaw drop at full opening, in L; never more than the jaw below the mouth can stretch. */
  maxDrop: 0.2,
  maxDropPerJaw: 0.9,
  /** The chin region always spans at least this much below the mouth, in L (long muzzles put the chin close). */
  minJaw: 0.22,
  /** From the lips' shape to the whole jaw's over this many jaw lengths, so the skin beside the mouth stretches gently. */
  jawBlend: 1.2,
  /** Below that the pull fades out over this many jaw lengths (the throat stretches, the chest stays). */
  jawFade: 1.6,
  /** Upper lip lift as a share of the drop. */
  lift: 0.15,
  /** The jaw moves as a whole out to this many half-widths, then fades by `jawEdge` (cheeks stay). */
  jawInner: 0.8,
  jawEdge: 2.6,
  /** Corners: open vowels spread the mouth, rounded ones draw it in. */
  spread: 0.15,
  pucker: 0.35,
} as const;

const THROAT_DEEP = [22, 6, 9] as const;
const THROAT_EDGE = [96, 32, 40] as const;
const TONGUE = [205, 100, 112] as const;
const TEETH = [226, 218, 200] as const;

/**
 * Jaw poses are drawn at these steps (0.6 px of a 30 px drop: finer than the eye follows at 25 fps)
 * and kept, up to maxBytes, so a pose seen before costs a copy.
 */
const JAW_CACHE = { openSteps: 48, roundSteps: 6, maxBytes: 64 * 1024 * 1024 } as const;
/** sin 15°. */
const UPRIGHT_TILT = 0.26;
const MOTION_LEVELS = 64;
/** Runs of pixels whose weights rise (or fall) along the row: the band around the head. */
const RISING = -1;
const FALLING = -2;

/** Catmull-Rom weights of the four taps around a sample at fraction t (0-1) past the second one. */
function catmullRom(t: number, into: Float64Array): void {
  into[0] = ((-0.5 * t + 1) * t - 0.5) * t;
  into[1] = (1.5 * t - 2.5) * t * t + 1;
  into[2] = ((-1.5 * t + 2) * t + 0.5) * t;
  into[3] = (0.5 * t - 0.5) * t * t;
}

const smoothstep = (edge0: number, edge1: number, x: number): number => {
  const t = Math.min(1, Math.max(0, (x - edge0) / (edge1 - edge0)));
  return t * t * (3 - 2 * t);
};

/** One frame's jaw: how far it drops and the shape of the opening, in output pixels. */
interface JawMotion {
  drop: number;
  lift: number;
  /** Half width of the opening (spread or drawn in by the vowel). */
  opening: number;
  jawInner: number;
  jawEdge: number;
  blendEnd: number;
  jawEnd: number;
  rim: number;
}

interface Rect {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/**
 * Animates a still photo of a pet's face at output resolution: the lower jaw and chin are pulled
 * down by a smooth displacement field (its inverse is solved per pixel, and the photo is sampled
 * with Catmull-Rom, so the pet's own fur moves and stays sharp), the gap between the lips is filled
 * with a shaded mouth (throat, tongue, a hint of teeth, a dark lip rim, antialiased edges), the
 * eyelids close by pulling the fur above each eye down, and the head moves by whole pixels (fur is
 * never resampled for head motion, so it stays as sharp as the photo). Only the regions that
 * change are recomputed each frame.
 */
export class FaceRig {
  readonly width: number;
  readonly height: number;
  private readonly source: Buffer;
  private readonly deformed: Buffer;
  private readonly overlay: Overlay | undefined;

  // Face frame (output pixels): origin at the mouth, `right` across the face, `down` towards the chin.
  private readonly mouth: Point;
  private readonly right: Point;
  private readonly down: Point;
  private readonly upright: boolean;
  private readonly halfWidth: number;
  private readonly jaw: number;
  /** Depths below the mouth line where the lips' shape has become the whole jaw's, and where the pull ends. */
  private readonly jawBlendEnd: number;
  private readonly jawEnd: number;
  private readonly maxDrop: number;
  private readonly upperReach: number;
  private readonly jawRect: Rect;
  private readonly eyes: Array<{ centre: Point; rx: number; ry: number; rect: Rect }>;
  private readonly colors: { throatEdge: number[]; tongue: number[]; teeth: number[] };
  // Head motion: a weight per pixel of `motionRect` (MOTION_LEVELS on the head, fading to 0 around it),
  // and per row the runs of pixels (start, end, kind): one weight for all (kind = that level), or weights
  // that only rise (RISING) or only fall (FALLING) along the run.
  private readonly motionRect: Rect;
  private readonly motionLevel: Uint8Array;
  private readonly motionRuns: Int32Array[];
  private dirty: Rect[] = [];
  /** Per whole pixel of depth below the mouth: how far the jaw's shape has turned from the lips' to the whole jaw's, and how much of the pull is left. */
  private readonly jawBlendAt: Float32Array;
  private readonly jawFadeAt: Float32Array;
  /** Drawn jaws by quantised pose: a song revisits the same openings again and again. */
  private readonly jawPatches = new Map<number, Buffer>();
  /** Scratch for the sampling weights (no allocation per pixel). */
  private readonly tapsX = new Float64Array(4);
  private readonly tapsY = new Float64Array(4);

  constructor(options: { frame: RgbImage; face: PetFace; overlay?: Overlay; blinks: boolean }) {
    const { frame, face } = options;
    this.width = frame.width;
    this.height = frame.height;
    this.source = Buffer.from(frame.data);
    this.deformed = Buffer.from(frame.data);
    this.overlay = options.overlay;

    const length = Math.max(4, faceLength(face));
    const eyeMid: Point = [(face.eyes[0][0] + face.eyes[1][0]) / 2, (face.eyes[0][1] + face.eyes[1][1]) / 2];
    const toChin = Math.hypot(face.chin[0] - eyeMid[0], face.chin[1] - eyeMid[1]);
    const down: Point = toChin > 1 ? [(face.chin[0] - eyeMid[0]) / toChin, (face.chin[1] - eyeMid[1]) / toChin] : [0, 1];
    // A head tilted less than this drops its jaw straight down the image: the fast, vertical-only path.
    this.upright = Math.abs(down[0]) < UPRIGHT_TILT && down[1] > 0;
    this.down = this.upright ? [0, 1] : down;
    this.right = [this.down[1], -this.down[0]];
    this.mouth = face.mouth;
    const along = (p: Point, axis: Point) => (p[0] - face.mouth[0]) * axis[0] + (p[1] - face.mouth[1]) * axis[1];
    const eyeDistance = Math.hypot(face.eyes[1][0] - face.eyes[0][0], face.eyes[1][1] - face.eyes[0][1]);
    this.halfWidth = face.mouthCorners
      ? Math.max(3, Math.hypot(face.mouthCorners[1][0] - face.mouthCorners[0][0], face.mouthCorners[1][1] - face.mouthCorners[0][1]) / 2)
      : Math.min(0.35 * length, Math.max(0.15 * length, 0.33 * eyeDistance));
    this.jaw = Math.max(along(face.chin, this.down), RIG.minJaw * length);
    this.maxDrop = Math.min(RIG.maxDrop * length, RIG.maxDropPerJaw * this.jaw);
    this.upperReach = Math.max(2, 0.7 * -along(face.nose, this.down));
    this.jawBlendEnd = this.jaw * RIG.jawBlend;
    this.jawEnd = this.jaw * (RIG.jawBlend + RIG.jawFade);
    const depths = Math.ceil(this.jawEnd) + 2;
    this.jawBlendAt = Float32Array.from({ length: depths }, (_, v) => smoothstep(0, this.jawBlendEnd, v));
    this.jawFadeAt = Float32Array.from({ length: depths }, (_, v) => 1 - smoothstep(this.jawBlendEnd, this.jawEnd, v));

    const reachU = RIG.jawEdge * this.halfWidth * (1 + RIG.spread) + 2;
    this.jawRect = this.boundsOf([-reachU, reachU], [-this.upperReach - 2, this.jawEnd + this.maxDrop + 2], this.mouth);

    // Eyelids only where both eyes were seen (a profile's far eye, or eyes guessed around a tapped mouth, are not drawn on).
    const frontal = eyeDistance >= 0.45 * length;
    this.eyes = options.blinks && frontal
      ? face.eyes.map((centre) => {
          const rx = Math.min(0.13 * length, Math.max(0.035 * length, 0.2 * eyeDistance));
          const ry = 0.75 * rx;
          return { centre, rx, ry, rect: this.boundsOf([-rx - 1, rx + 1], [-3 * ry - 2, ry + 2], centre) };
        })
      : [];

    this.colors = this.sampleColors(face, length);

    // The head: an ellipse from above the ears to below the chin, fading out over a third of its size.
    const centre: Point = [eyeMid[0] + this.down[0] * 0.2 * length, eyeMid[1] + this.down[1] * 0.2 * length];
    const ry = 1.05 * length;
    const rx = Math.max(0.9 * length, 0.85 * eyeDistance + 0.3 * length);
    const fade = 1.1;
    const union = [this.boundsOf([-rx * fade, rx * fade], [-ry * fade, ry * fade], centre), this.jawRect, ...this.eyes.map((eye) => eye.rect)];
    this.motionRect = {
      left: Math.min(...union.map((r) => r.left)),
      top: Math.min(...union.map((r) => r.top)),
      right: Math.max(...union.map((r) => r.right)),
      bottom: Math.max(...union.map((r) => r.bottom)),
    };
    const { left, top, right, bottom } = this.motionRect;
    const rectWidth = right - left;
    this.motionLevel = new Uint8Array(rectWidth * (bottom - top));
    this.motionRuns = [];
    for (let y = top; y < bottom; y++) {
      const runs: number[] = [];
      for (let x = left; x < right; x++) {
        const u = ((x - centre[0]) * this.right[0] + (y - centre[1]) * this.right[1]) / rx;
        const v = ((x - centre[0]) * this.down[0] + (y - centre[1]) * this.down[1]) / ry;
        const level = Math.round(MOTION_LEVELS * (1 - smoothstep(1, fade, Math.hypot(u, v))));
        this.motionLevel[(y - top) * rectWidth + (x - left)] = level;
        const previous = x > left ? this.motionLevel[(y - top) * rectWidth + (x - left - 1)]! : level;
        const last = runs.length - 3;
        const pure = level === 0 || level === MOTION_LEVELS;
        if (pure && last >= 0 && runs[last + 2] === level) runs[last + 1] = x + 1;
        else if (pure) runs.push(x, x + 1, level);
        else if (last >= 0 && runs[last + 2]! < 0 && level === previous) runs[last + 1] = x + 1;
        else if (last >= 0 && runs[last + 2] === (level > previous ? RISING : FALLING)) runs[last + 1] = x + 1;
        else if (last >= 0 && runs[last + 2]! < 0 && runs[last + 1]! - runs[last]! === 1) {
          // A one-pixel run takes the direction its second pixel gives it.
          runs[last + 1] = x + 1;
          runs[last + 2] = level > previous ? RISING : FALLING;
        } else runs.push(x, x + 1, RISING);
      }
      this.motionRuns.push(Int32Array.from(runs));
    }
  }

  /** The pixel rectangle (clipped to the frame) covering face-frame coordinates u × v around `origin`. */
  private boundsOf([u0, u1]: [number, number], [v0, v1]: [number, number], origin: Point): Rect {
    const xs: number[] = [];
    const ys: number[] = [];
    for (const u of [u0, u1]) {
      for (const v of [v0, v1]) {
        xs.push(origin[0] + u * this.right[0] + v * this.down[0]);
        ys.push(origin[1] + u * this.right[1] + v * this.down[1]);
      }
    }
    return {
      left: Math.max(0, Math.floor(Math.min(...xs))),
      top: Math.max(0, Math.floor(Math.min(...ys))),
      right: Math.min(this.width, Math.ceil(Math.max(...xs)) + 1),
      bottom: Math.min(this.height, Math.ceil(Math.max(...ys)) + 1),
    };
  }

  /** Mouth colours in the pet's own tones: the lips' darkest fur tints the throat, the face's brightness scales teeth and tongue. */
  private sampleColors(face: PetFace, length: number): FaceRig['colors'] {
    const radius = Math.max(2, Math.round(0.12 * length));
    const samples: number[][] = [];
    for (let y = Math.round(face.mouth[1]) - radius; y <= Math.round(face.mouth[1]) + radius; y++) {
      for (let x = Math.round(face.mouth[0]) - radius; x <= Math.round(face.mouth[0]) + radius; x++) {
        if (x < 0 || y < 0 || x >= this.width || y >= this.height) continue;
        const o = (y * this.width + x) * 3;
        samples.push([this.source[o]!, this.source[o + 1]!, this.source[o + 2]!]);
      }
    }
    const luma = (c: number[]) => 0.299 * c[0]! + 0.587 * c[1]! + 0.114 * c[2]!;
    samples.sort((a, b) => luma(a) - luma(b));
    const darkest = samples.slice(0, Math.max(1, Math.floor(samples.length / 4)));
    const mean = (list: number[][], c: number) => list.reduce((sum, s) => sum + s[c]!, 0) / Math.max(1, list.length);
    const lip = [0, 1, 2].map((c) => mean(darkest, c));
    const brightness = Math.min(1.1, Math.max(0.6, mean(samples.map((s) => [luma(s)]), 0) / 140));
    return {
      throatEdge: THROAT_EDGE.map((value, c) => 0.65 * value + 0.35 * lip[c]!),
      tongue: TONGUE.map((value, c) => (0.75 * value + 0.25 * lip[c]!) * brightness),
      teeth: TEETH.map((value) => Math.min(255, value * brightness)),
    };
  }

  /** Writes one frame (width×height×3 RGB) into `out`. */
  render(pose: RigPose, out: Buffer): void {
    for (const rect of this.dirty) this.restore(rect);
    this.dirty = [];
    const openStep = Math.round(Math.min(1, Math.max(0, pose.open)) * JAW_CACHE.openSteps);
    if (openStep > 0) {
      const roundStep = Math.round(Math.min(1, Math.max(0, pose.round)) * JAW_CACHE.roundSteps);
      const key = openStep * (JAW_CACHE.roundSteps + 1) + roundStep;
      const patch = this.jawPatches.get(key);
      if (patch) this.copyRect(this.jawRect, patch, 'in');
      else {
        this.drawJaw(openStep / JAW_CACHE.openSteps, roundStep / JAW_CACHE.roundSteps);
        const bytes = (this.jawRect.right - this.jawRect.left) * (this.jawRect.bottom - this.jawRect.top) * 3;
        if ((this.jawPatches.size + 1) * bytes <= JAW_CACHE.maxBytes) {
          const saved = Buffer.allocUnsafe(bytes);
          this.copyRect(this.jawRect, saved, 'out');
          this.jawPatches.set(key, saved);
        }
      }
      this.dirty.push(this.jawRect);
    }
    if (pose.blink > 0.02) {
      for (const eye of this.eyes) {
        this.drawBlink(eye, pose.blink);
        this.dirty.push(eye.rect);
      }
    }
    this.copyStill(out);
    this.moveHead(pose.headX, pose.headY, out);
    if (this.overlay) drawOverlay(out, this.width, this.overlay);
  }

  /** The photo as it is, everywhere outside the head's motion rectangle (moveHead writes the inside). */
  private copyStill(out: Buffer): void {
    const { left, top, right, bottom } = this.motionRect;
    const { source, width } = this;
    out.set(source.subarray(0, top * width * 3), 0);
    out.set(source.subarray(bottom * width * 3), bottom * width * 3);
    for (let y = top; y < bottom; y++) {
      const row = y * width * 3;
      if (left > 0) out.set(source.subarray(row, row + left * 3), row);
      if (right < width) out.set(source.subarray(row + right * 3, row + width * 3), row + right * 3);
    }
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

  /** Catmull-Rom sample of the photo at (x, y), written to `target[at..at+3]`, each channel scaled by `gain`. */
  private sample(x: number, y: number, target: Buffer, at: number, gain: number): void {
    const { source, width, height } = this;
    const x1 = Math.floor(x);
    const y1 = Math.floor(y);
    const { tapsX, tapsY } = this;
    catmullRom(x - x1, tapsX);
    catmullRom(y - y1, tapsY);
    const wx0 = tapsX[0]!;
    const wx1 = tapsX[1]!;
    const wx2 = tapsX[2]!;
    const wx3 = tapsX[3]!;
    const cx0 = Math.min(width - 1, Math.max(0, x1 - 1)) * 3;
    const cx1 = Math.min(width - 1, Math.max(0, x1)) * 3;
    const cx2 = Math.min(width - 1, Math.max(0, x1 + 1)) * 3;
    const cx3 = Math.min(width - 1, Math.max(0, x1 + 2)) * 3;
    let r = 0;
    let g = 0;
    let b = 0;
    for (let j = 0; j < 4; j++) {
      const row = Math.min(height - 1, Math.max(0, y1 - 1 + j)) * width * 3;
      const w = tapsY[j]!;
      const a0 = row + cx0;
      const a1 = row + cx1;
      const a2 = row + cx2;
      const a3 = row + cx3;
      r += w * (wx0 * source[a0]! + wx1 * source[a1]! + wx2 * source[a2]! + wx3 * source[a3]!);
      g += w * (wx0 * source[a0 + 1]! + wx1 * source[a1 + 1]! + wx2 * source[a2 + 1]! + wx3 * source[a3 + 1]!);
      b += w * (wx0 * source[a0 + 2]! + wx1 * source[a1 + 2]! + wx2 * source[a2 + 2]! + wx3 * source[a3 + 2]!);
    }
    target[at] = Math.min(255, Math.max(0, r * gain + 0.5));
    target[at + 1] = Math.min(255, Math.max(0, g * gain + 0.5));
    target[at + 2] = Math.min(255, Math.max(0, b * gain + 0.5));
  }

  /** Catmull-Rom sample down column x (an integer) at height y: the upright jaw moves fur only vertically. */
  private sampleColumn(x: number, y: number, target: Buffer, at: number, gain: number): void {
    const { source, width, height } = this;
    const y1 = Math.floor(y);
    const taps = this.tapsY;
    catmullRom(y - y1, taps);
    const w0 = taps[0]!;
    const w1 = taps[1]!;
    const w2 = taps[2]!;
    const w3 = taps[3]!;
    const stride = width * 3;
    const column = x * 3;
    const r0 = Math.min(height - 1, Math.max(0, y1 - 1)) * stride + column;
    const r1 = Math.min(height - 1, Math.max(0, y1)) * stride + column;
    const r2 = Math.min(height - 1, Math.max(0, y1 + 1)) * stride + column;
    const r3 = Math.min(height - 1, Math.max(0, y1 + 2)) * stride + column;
    for (let c = 0; c < 3; c++) {
      const value = (w0 * source[r0 + c]! + w1 * source[r1 + c]! + w2 * source[r2 + c]! + w3 * source[r3 + c]!) * gain;
      target[at + c] = Math.min(255, Math.max(0, value + 0.5));
    }
  }

  private jawMotion(open: number, round: number): JawMotion {
    const { halfWidth } = this;
    const drop = open * this.maxDrop;
    return {
      drop,
      lift: RIG.lift * drop,
      opening: halfWidth * (1 + RIG.spread * open * (1 - round) - RIG.pucker * round),
      jawInner: RIG.jawInner * halfWidth,
      jawEdge: RIG.jawEdge * halfWidth,
      blendEnd: this.jawBlendEnd,
      jawEnd: this.jawEnd,
      rim: Math.max(1.5, 0.12 * halfWidth),
    };
  }

  /** How far the lower face moves at depth v below the mouth line, in a column with lip profile e and jaw profile j. */
  private static lowerShift(m: JawMotion, e: number, j: number, v: number): number {
    return m.drop * (e + (j - e) * smoothstep(0, m.blendEnd, v)) * (1 - smoothstep(m.blendEnd, m.jawEnd, v));
  }

  /** The upper lip's depth in the photo that lands at v (above the mouth line): its lift fades with a slope well under 1, so fixed-point iteration converges. */
  private upperSource(m: JawMotion, e: number, v: number, topLip: number): number {
    const target = Math.min(v, topLip);
    let s = Math.min(0, target - topLip);
    for (let i = 0; i < 5; i++) s = Math.min(0, target + m.lift * e * (1 - smoothstep(0, this.upperReach, -s)));
    return s;
  }

  private drawJaw(open: number, round: number): void {
    const m = this.jawMotion(open, round);
    if (this.upright) this.drawJawUpright(m);
    else this.drawJawTilted(m);
  }

  /**
   * Upright faces (the jaw drops straight down the image): each column maps monotonically, so its
   * inverse comes from one scan down the column, and samples are vertical (4 taps).
   */
  private drawJawUpright(m: JawMotion): void {
    const { mouth, width, height, jawBlendAt, jawFadeAt, deformed } = this;
    const left = Math.max(this.jawRect.left, Math.ceil(mouth[0] - m.jawEdge));
    const right = Math.min(this.jawRect.right, Math.floor(mouth[0] + m.jawEdge) + 1);
    const columns = Math.max(0, right - left);
    const stride = width * 3;
    const last = jawBlendAt.length - 1;
    // Per column: the lip profile e, the jaw profile j, and the scan state (source depth k and where k and k+1 land).
    const lip = new Float64Array(columns);
    const jawProfile = new Float64Array(columns);
    const across = new Float64Array(columns);
    const depth = new Int32Array(columns);
    const landK = new Float64Array(columns);
    const landNext = new Float64Array(columns);
    for (let i = 0; i < columns; i++) {
      const au = Math.abs(left + i - mouth[0]);
      across[i] = au / m.opening;
      const e = across[i]! < 1 ? Math.pow(1 - across[i]! * across[i]!, 0.8) : 0;
      const j = 1 - smoothstep(m.jawInner, m.jawEdge, au);
      lip[i] = e;
      jawProfile[i] = j;
      landK[i] = m.drop * e;
      landNext[i] = 1 + m.drop * (e + (j - e) * jawBlendAt[1]!) * jawFadeAt[1]!;
    }
    const firstRow = Math.max(0, Math.ceil(mouth[1] - this.upperReach));
    const lastRow = Math.min(height - 1, Math.floor(mouth[1] + m.jawEnd + m.drop));
    for (let y = firstRow; y <= lastRow; y++) {
      const v = y - mouth[1];
      for (let i = 0; i < columns; i++) {
        const e = lip[i]!;
        const bottomLip = m.drop * e;
        const topLip = -m.lift * e;
        const lower = v >= (topLip + bottomLip) / 2;
        let s: number;
        if (lower) {
          const target = v > bottomLip ? v : bottomLip;
          const j = jawProfile[i]!;
          let k = depth[i]!;
          while (landNext[i]! <= target) {
            k++;
            landK[i] = landNext[i]!;
            const at = k + 1 < last ? k + 1 : last;
            landNext[i] = k + 1 + m.drop * (e + (j - e) * jawBlendAt[at]!) * jawFadeAt[at]!;
          }
          depth[i] = k;
          const span = landNext[i]! - landK[i]!;
          s = k + (target - landK[i]!) / (span > 1e-6 ? span : 1e-6);
        } else {
          s = this.upperSource(m, e, v, topLip);
        }
        const x = left + i;
        // Rows near the lips get the full treatment (rim, opening); the rest only move.
        if (v >= topLip - m.rim - 1 && v <= bottomLip + m.rim + 1) {
          this.paintJaw(m, y * stride + x * 3, across[i]!, e, v, s, lower, x, mouth[1] + s, true);
          continue;
        }
        const moved = v - s;
        if (moved < 0.01 && moved > -0.01) continue;
        this.sampleColumn(x, mouth[1] + s, deformed, y * stride + x * 3, 1);
      }
    }
  }

  /** Tilted faces: the inverse is solved per pixel along the face's own axes and sampled in 2D (16 taps). */
  private drawJawTilted(m: JawMotion): void {
    const { mouth, right, down, width } = this;
    const { left, top, right: rectRight, bottom } = this.jawRect;
    for (let y = top; y < bottom; y++) {
      for (let x = left; x < rectRight; x++) {
        const dx = x - mouth[0];
        const dy = y - mouth[1];
        const u = dx * right[0] + dy * right[1];
        const v = dx * down[0] + dy * down[1];
        const au = Math.abs(u);
        if (au >= m.jawEdge || v < -this.upperReach || v > m.jawEnd + m.drop) continue;
        const across = au / m.opening;
        const e = across < 1 ? Math.pow(1 - across * across, 0.8) : 0;
        const j = 1 - smoothstep(m.jawInner, m.jawEdge, au);
        const bottomLip = m.drop * e;
        const topLip = -m.lift * e;
        const lower = v >= (topLip + bottomLip) / 2;
        let s: number;
        if (lower) {
          // s + shift(s) rises with s (the skin beside the mouth may stretch steeply), so bisect, then interpolate.
          const target = Math.max(v, bottomLip);
          let low = Math.max(0, target - m.drop);
          let high = target;
          let lowError = low + FaceRig.lowerShift(m, e, j, low) - target;
          let highError = high + FaceRig.lowerShift(m, e, j, high) - target;
          for (let i = 0; i < 6 && highError - lowError > 0.05; i++) {
            const middle = (low + high) / 2;
            const error = middle + FaceRig.lowerShift(m, e, j, middle) - target;
            if (error > 0) [high, highError] = [middle, error];
            else [low, lowError] = [middle, error];
          }
          s = highError - lowError > 1e-6 ? low - (lowError * (high - low)) / (highError - lowError) : low;
        } else {
          s = this.upperSource(m, e, v, topLip);
        }
        this.paintJaw(m, (y * width + x) * 3, across, e, v, s, lower, mouth[0] + u * right[0] + s * down[0], mouth[1] + u * right[1] + s * down[1], false);
      }
    }
  }

  /**
   * One pixel of the jaw at depth v (face units below the mouth line) whose fur comes from depth s
   * (photo position sx, sy): the lip rim darkened, and inside the opening the shaded mouth.
   */
  private paintJaw(m: JawMotion, o: number, across: number, e: number, v: number, s: number, lower: boolean, sx: number, sy: number, vertical: boolean): void {
    const bottomLip = m.drop * e;
    const topLip = -m.lift * e;
    const gap = bottomLip - topLip;
    const outside = lower ? v - bottomLip : topLip - v;
    let gain = 1;
    if (e > 0 && outside >= 0 && outside < m.rim) gain = 1 - (lower ? 0.5 : 0.35) * e * Math.min(1, gap / 6) * (1 - outside / m.rim);
    // Antialiased over about a pixel and a half, so the lips' edge is soft like the photo's.
    const coverage = e > 0 && gap > 0.3 ? Math.min(1, Math.max(0, (Math.min(v - topLip, bottomLip - v) + 0.75) / 1.5)) : 0;
    if (Math.abs(s - v) < 0.01 && gain === 1 && coverage === 0) return;
    const { deformed } = this;
    if (vertical) this.sampleColumn(sx, sy, deformed, o, gain);
    else this.sample(sx, sy, deformed, o, gain);
    if (coverage === 0) return;
    // Inside the opening: throat, tongue and teeth, shaded by position in the gap.
    const { throatEdge, tongue, teeth } = this.colors;
    const t = Math.min(1, Math.max(0, (v - topLip) / gap));
    const depth = Math.hypot(across, (t - 0.4) / 0.6);
    // Deep in the middle, lighter towards the cheeks, and in the upper lip's shadow at the top.
    const glow = smoothstep(0.3, 1.1, depth) * (0.45 + 0.55 * smoothstep(0, 0.4, t));
    let r = THROAT_DEEP[0] + (throatEdge[0]! - THROAT_DEEP[0]) * glow;
    let g = THROAT_DEEP[1] + (throatEdge[1]! - THROAT_DEEP[1]) * glow;
    let b = THROAT_DEEP[2] + (throatEdge[2]! - THROAT_DEEP[2]) * glow;
    if (gap >= 5) {
      const tongueTop = 0.55 + 0.35 * across * across;
      const a = Math.min(1, Math.max(0, ((t - tongueTop) * gap) / 1.5));
      if (a > 0) {
        const shade = (0.6 + 0.4 * smoothstep(tongueTop, 1, t)) * (1 - 0.35 * across * across);
        r += (tongue[0]! * shade - r) * a;
        g += (tongue[1]! * shade - g) * a;
        b += (tongue[2]! * shade - b) * a;
      }
    }
    if (gap >= 14) {
      const offCentre = Math.abs(across - 0.62) / 0.11;
      if (offCentre < 1) {
        const toothLength = 0.2 * (1 - offCentre);
        const a = 0.6 * Math.min(1, Math.max(0, ((toothLength - t) * gap) / 1.2));
        const shade = 0.7 + 0.25 * (1 - t / Math.max(1e-3, toothLength));
        r += (teeth[0]! * shade - r) * a;
        g += (teeth[1]! * shade - g) * a;
        b += (teeth[2]! * shade - b) * a;
      }
    }
    deformed[o] = deformed[o]! + (r - deformed[o]!) * coverage + 0.5;
    deformed[o + 1] = deformed[o + 1]! + (g - deformed[o + 1]!) * coverage + 0.5;
    deformed[o + 2] = deformed[o + 2]! + (b - deformed[o + 2]!) * coverage + 0.5;
  }

  /** The upper lid slides down over the eye: the fur above it is stretched down to `blink` of the eye's height, with a dark lash line. */
  private drawBlink(eye: FaceRig['eyes'][number], blink: number): void {
    const { right, down, deformed, width } = this;
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
          this.sample(centre[0] + a * right[0] + s * down[0], centre[1] + a * right[1] + s * down[1], deformed, o, gain);
          for (let c = 0; c < 3; c++) deformed[o + c] = before[c]! + (deformed[o + c]! - before[c]!) * cover;
          continue;
        }
        this.sample(centre[0] + a * right[0] + s * down[0], centre[1] + a * right[1] + s * down[1], deformed, o, gain);
      }
    }
  }

  /** Copies the deformed head into `out`, each pixel moved by whole pixels (its weight times the offset). */
  private moveHead(headX: number, headY: number, out: Buffer): void {
    const { left, top, right, bottom } = this.motionRect;
    const { motionLevel, motionRuns } = this;
    const offsetX = new Int32Array(MOTION_LEVELS + 1);
    const offsetY = new Int32Array(MOTION_LEVELS + 1);
    // The weights at which a pixel's whole-pixel offset steps: few, since the head moves a few pixels.
    const steps: number[] = [];
    for (let level = 0; level <= MOTION_LEVELS; level++) {
      offsetX[level] = Math.round((level / MOTION_LEVELS) * headX);
      offsetY[level] = Math.round((level / MOTION_LEVELS) * headY);
      if (level > 0 && (offsetX[level] !== offsetX[level - 1] || offsetY[level] !== offsetY[level - 1])) steps.push(level);
    }
    const rectWidth = right - left;
    for (let y = top; y < bottom; y++) {
      const runs = motionRuns[y - top]!;
      const row = (y - top) * rectWidth - left;
      for (let r = 0; r < runs.length; r += 3) {
        const start = runs[r]!;
        const end = runs[r + 1]!;
        const kind = runs[r + 2]!;
        if (kind >= 0) {
          this.copyShifted(out, y, start, end, offsetX[kind]!, offsetY[kind]!);
          continue;
        }
        // Along a rising (falling) run each step weight is crossed once: find where by bisection and
        // copy the stretches between crossings, each with one offset.
        const rising = kind === RISING;
        let from = start;
        for (let i = 0; i < steps.length; i++) {
          const step = steps[rising ? i : steps.length - 1 - i]!;
          let low = from;
          let high = end;
          while (low < high) {
            const middle = (low + high) >> 1;
            const level = motionLevel[row + middle]!;
            if (rising ? level >= step : level < step) high = middle;
            else low = middle + 1;
          }
          if (low > from) {
            const level = motionLevel[row + from]!;
            this.copyShifted(out, y, from, low, offsetX[level]!, offsetY[level]!);
            from = low;
          }
        }
        if (from < end) {
          const level = motionLevel[row + from]!;
          this.copyShifted(out, y, from, end, offsetX[level]!, offsetY[level]!);
        }
      }
    }
  }

  /** out[y][start, end) = deformed shifted by (dx, dy), clamped at the frame's edges. */
  private copyShifted(out: Buffer, y: number, start: number, end: number, dx: number, dy: number): void {
    const { deformed, width, height } = this;
    const sy = y - dy;
    const sx = start - dx;
    if (sy >= 0 && sy < height && sx >= 0 && sx + (end - start) <= width) {
      const from = (sy * width + sx) * 3;
      const to = (y * width + start) * 3;
      const bytes = (end - start) * 3;
      // Short runs byte by byte: a subarray view costs more than copying a few pixels.
      if (bytes >= 96) out.set(deformed.subarray(from, from + bytes), to);
      else for (let i = 0; i < bytes; i++) out[to + i] = deformed[from + i]!;
      return;
    }
    const row = Math.min(height - 1, Math.max(0, sy)) * width;
    for (let x = start; x < end; x++) {
      const source = (row + Math.min(width - 1, Math.max(0, x - dx))) * 3;
      const target = (y * width + x) * 3;
      out[target] = deformed[source]!;
      out[target + 1] = deformed[source + 1]!;
      out[target + 2] = deformed[source + 2]!;
    }
  }
}
