import { join } from 'node:path';
import sharp from 'sharp';
import type { RenderResult } from '../src/render-pipeline.ts';
import { decodeRegion, meanAbsDiff, pearson, type Box } from './helpers.ts';
import { PETS, type Annotation } from './pet-annotations.ts';

/** What the singing tests measure on rendered videos of the real pets. */

export type Crop = RenderResult['framing'];
export const even = (v: number) => 2 * Math.round(v / 2);

/** A photo point in output-frame pixels, through the crop the render reports. */
export function toFrame(crop: Crop, width: number, [x, y]: [number, number]): [number, number] {
  const scale = width / crop.width;
  return [(x - crop.left) * scale, (y - crop.top) * scale];
}

export function faceUnit(annotation: Annotation): number {
  const [[x0, y0], [x1, y1]] = annotation.eyes!;
  return Math.hypot((x0 + x1) / 2 - annotation.chin![0], (y0 + y1) / 2 - annotation.chin![1]);
}

export function boxAround(frameWidth: number, frameHeight: number, [x, y]: [number, number], size: number, below = 0.5): Box {
  const side = even(Math.max(16, Math.min(size, frameWidth, frameHeight)));
  return {
    left: even(Math.min(frameWidth - side, Math.max(0, x - side / 2))),
    top: even(Math.min(frameHeight - side, Math.max(0, y - side * (1 - below)))),
    width: side,
    height: side,
  };
}

/** Variance of the Laplacian: how much fine detail (fur) a grey window holds. */
export function sharpness(grey: Uint8Array, width: number, height: number): number {
  let sum = 0;
  let squares = 0;
  let n = 0;
  for (let y = 1; y < height - 1; y++) {
    for (let x = 1; x < width - 1; x++) {
      const i = y * width + x;
      const value = 4 * grey[i]! - grey[i - 1]! - grey[i + 1]! - grey[i - width]! - grey[i + width]!;
      sum += value;
      squares += value * value;
      n++;
    }
  }
  return squares / n - (sum / n) ** 2;
}

/** The photo as the output shows it without any animation: cut by the reported crop, scaled to the frame, grey. */
export async function stillFrame(file: string, crop: Crop, width: number, height: number): Promise<Uint8Array> {
  const photo = sharp(join(PETS, file)).rotate();
  const { width: photoWidth, height: photoHeight } = await sharp(await photo.clone().toBuffer()).metadata();
  // A tall frame (9:16) may reach past the photo's edges, where the render shows its fill: mirrored here, which only
  // matters to measures taken there (those of the face are inside the photo).
  const left = Math.round(crop.left);
  const top = Math.round(crop.top);
  const pad = {
    left: Math.max(0, -left),
    top: Math.max(0, -top),
    right: Math.max(0, left + Math.round(crop.width) - photoWidth!),
    bottom: Math.max(0, top + Math.round(crop.height) - photoHeight!),
  };
  const padded = pad.left + pad.top + pad.right + pad.bottom > 0 ? sharp(await photo.extend({ ...pad, extendWith: 'mirror' }).toBuffer()) : photo;
  return await padded
    .extract({ left: left + pad.left, top: top + pad.top, width: Math.round(crop.width), height: Math.round(crop.height) })
    .resize(width, height)
    .greyscale()
    .raw()
    .toBuffer();
}

export function windowOf(grey: Uint8Array, frameWidth: number, box: Box): Uint8Array {
  const out = new Uint8Array(box.width * box.height);
  for (let y = 0; y < box.height; y++) out.set(grey.subarray((box.top + y) * frameWidth + box.left, (box.top + y) * frameWidth + box.left + box.width), y * box.width);
  return out;
}

/** The voice's loudness (RMS) in each video frame of `fps`, from 16 kHz samples. */
function vocalEnvelope(voice: Float32Array, frames: number, fps: number): number[] {
  const perFrame = 16000 / fps;
  return Array.from({ length: frames }, (_, i) => {
    let sum = 0;
    for (let j = i * perFrame; j < (i + 1) * perFrame && j < voice.length; j++) sum += voice[j]! ** 2;
    return Math.sqrt(sum / perFrame);
  });
}


/** How far (px) the head's whole-pixel motion may carry the face: idle-life.ts caps it at 3 px, and a phrase start lifts a nod by 70%. */
const HEAD_SHIFT = 5;

export type Render = { path: string; crop: Crop; width: number; height: number };

/**
 * A window of every frame compared with frame `reference` at each whole-pixel shift up to HEAD_SHIFT: per frame, the
 * least mean absolute grey difference (`change`) and the shift that gives it (`shift`, [dx, dy]: the frame's content
 * moved right and down by that much).
 */
export async function windowMotion(render: Render, centre: [number, number], size: number, below: number, reference: number): Promise<{ change: number[]; shift: Array<[number, number]> }> {
  const box = boxAround(render.width - 2 * HEAD_SHIFT, render.height - 2 * HEAD_SHIFT, [centre[0] - HEAD_SHIFT, centre[1] - HEAD_SHIFT], size, below);
  // The window with a margin of HEAD_SHIFT on every side (inside the frame): each frame is compared at every shift.
  const wide = { left: box.left, top: box.top, width: box.width + 2 * HEAD_SHIFT, height: box.height + 2 * HEAD_SHIFT };
  const frames = await decodeRegion(render.path, wide);
  const still = frames[reference]!;
  const area = box.width * box.height;
  // Nearest shifts first, so a tie keeps the smallest motion.
  const shifts: Array<[number, number]> = [];
  for (let dy = -HEAD_SHIFT; dy <= HEAD_SHIFT; dy++) for (let dx = -HEAD_SHIFT; dx <= HEAD_SHIFT; dx++) shifts.push([dx, dy]);
  shifts.sort((p, q) => Math.hypot(...p) - Math.hypot(...q));
  const change: number[] = [];
  const shift: Array<[number, number]> = [];
  for (const frame of frames) {
    let best = Infinity;
    let at: [number, number] = [0, 0];
    for (const [dx, dy] of shifts) {
      let sum = 0;
      for (let y = 0; y < box.height && sum < best * area; y++) {
        const row = (y + HEAD_SHIFT) * wide.width + HEAD_SHIFT;
        const moved = row + dy * wide.width + dx;
        for (let x = 0; x < box.width; x++) sum += Math.abs(frame[moved + x]! - still[row + x]!);
      }
      if (sum / area < best) [best, at] = [sum / area, [dx, dy]];
    }
    change.push(best);
    shift.push(at);
  }
  return { change, shift };
}

/**
 * The mouth window's change from frame `reference` (the mouth closed), per frame: the window around the annotated
 * mouth, at the whole-pixel shift that matches best. The head moves the mouth with it by whole pixels (a nod on the
 * beat), which is not the mouth opening; what no shift explains is the mouth's own motion (and the encoder's noise).
 */
export async function mouthWindowChange(render: Render, annotation: Annotation, reference = 10): Promise<number[]> {
  const unit = faceUnit(annotation) * (render.width / render.crop.width);
  return (await windowMotion(render, toFrame(render.crop, render.width, annotation.mouth!), 0.6 * unit, 0.75, reference)).change;
}

/** How far down (px) the head sits in each frame against frame `reference`: the best whole-pixel shift of the window around the eyes. */
export async function headDrop(render: Render, annotation: Annotation, reference = 10): Promise<number[]> {
  const unit = faceUnit(annotation) * (render.width / render.crop.width);
  const [[x0, y0], [x1, y1]] = annotation.eyes!;
  const eyes = toFrame(render.crop, render.width, [(x0 + x1) / 2, (y0 + y1) / 2]);
  return (await windowMotion(render, eyes, 0.6 * unit, 0.5, reference)).shift.map(([, dy]) => dy);
}

export interface SingingMeasures {
  frames: number;
  /** Pearson r between the mouth window's change from a closed frame and the voice's loudness. */
  mouthVersusVoice: number;
  /** Largest mean change of the frame corner farthest from the mouth. */
  farCornerChange: number;
  /** Largest mean change of the bottom corner on the side away from the mouth (in a tall frame, below the head). */
  lowCornerChange: number;
  /** Sharpness of the fur above the eyes over the photo's own: mean over frames, and the 10th percentile frame. */
  furSharpness: number;
  furSharpness10th: number;
  /** The same over the video's first frame (silence, at rest): what the animation alone costs, whatever the scaler. */
  furSharpnessOverFirstFrame: number;
}

/**
 * A rendered video of `file` measured at the annotated (true) landmarks: the clip must open with at least
 * half a second without voice (frame 10 is the closed mouth).
 */
export async function measureSinging(render: { path: string; crop: Crop; width: number; height: number }, file: string, annotation: Annotation, voice: Float32Array, fps: number): Promise<SingingMeasures> {
  const unit = faceUnit(annotation) * (render.width / render.crop.width);
  const mouth = toFrame(render.crop, render.width, annotation.mouth!);
  const mouthBox = boxAround(render.width, render.height, mouth, 0.6 * unit, 0.75);
  const frames = await decodeRegion(render.path, mouthBox);
  const change = frames.map((frame) => meanAbsDiff(frame, frames[10]!));
  const mouthVersusVoice = pearson(change, vocalEnvelope(voice, frames.length, fps));

  // The frame corner farthest from the mouth: only idle life, if anything.
  const far = boxAround(render.width, render.height, [mouth[0] < render.width / 2 ? render.width : 0, mouth[1] < render.height / 2 ? render.height : 0], 48);
  const cornerChange = async (box: Box) => {
    const corner = await decodeRegion(render.path, box);
    return Math.max(...corner.map((frame) => meanAbsDiff(frame, corner[10]!)));
  };
  const farCornerChange = await cornerChange(far);
  const lowCornerChange = await cornerChange(boxAround(render.width, render.height, [mouth[0] < render.width / 2 ? render.width : 0, render.height], 48));

  // Fur above the eyes keeps the photo's sharpness (the head moves by whole pixels; nothing resamples it).
  const [[x0, y0], [x1, y1]] = annotation.eyes!;
  const [ex, ey] = toFrame(render.crop, render.width, [(x0 + x1) / 2, (y0 + y1) / 2]);
  const furBox = boxAround(render.width, render.height, [ex, ey - 0.45 * unit], 0.35 * unit, 0.5);
  const still = windowOf(await stillFrame(file, render.crop, render.width, render.height), render.width, furBox);
  const reference = sharpness(still, furBox.width, furBox.height);
  const fur = (await decodeRegion(render.path, furBox)).map((frame) => sharpness(frame, furBox.width, furBox.height));
  const ratios = fur.map((value) => value / reference).sort((a, b) => a - b);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  return {
    frames: frames.length,
    mouthVersusVoice,
    farCornerChange,
    lowCornerChange,
    furSharpness: mean(ratios),
    furSharpness10th: ratios[Math.floor(ratios.length / 10)]!,
    furSharpnessOverFirstFrame: mean(fur.map((value) => value / fur[0]!)),
  };
}

export interface OpeningMeasures {
  /** Pearson r between the mouth window's change from a closed frame (head motion taken out) and the voice's loudness. */
  mouthVersusVoice: number;
  /**
   * At the loudest 5% of frames, the mean absolute grey difference from the silent reference frame in a disc of
   * radius 0.3 × eyes-to-chin around the annotated mouth, at the head's whole-pixel shift (from the eyes' window).
   */
  loudOpening: number;
}

/** The share of the loudest frames whose opening is measured. */
const LOUDEST_SHARE = 0.05;
/** The disc around the mouth, in eyes-to-chin lengths. */
const OPENING_DISC = 0.3;

/** How far and how faithfully the mouth opens in a render of `annotation`'s photo (frame `reference` silent). */
export async function measureOpening(render: Render, annotation: Annotation, voice: Float32Array, fps: number, reference = 10): Promise<OpeningMeasures> {
  const change = await mouthWindowChange(render, annotation, reference);
  const loudness = vocalEnvelope(voice, change.length, fps);
  const mouthVersusVoice = pearson(change, loudness);
  const unit = faceUnit(annotation) * (render.width / render.crop.width);
  const [[x0, y0], [x1, y1]] = annotation.eyes!;
  const eyes = toFrame(render.crop, render.width, [(x0 + x1) / 2, (y0 + y1) / 2]);
  const shifts = (await windowMotion(render, eyes, 0.6 * unit, 0.5, reference)).shift;
  const radius = OPENING_DISC * unit;
  const [mx, my] = toFrame(render.crop, render.width, annotation.mouth!);
  const side = even(2 * radius + 2 * HEAD_SHIFT + 4);
  const box = { left: even(Math.max(0, Math.min(render.width - side, mx - side / 2))), top: even(Math.max(0, Math.min(render.height - side, my - side / 2))), width: side, height: side };
  const frames = await decodeRegion(render.path, box);
  const still = frames[reference]!;
  const loudest = [...loudness.keys()].sort((a, b) => loudness[b]! - loudness[a]!).slice(0, Math.max(1, Math.round(LOUDEST_SHARE * loudness.length)));
  let total = 0;
  for (const f of loudest) {
    const [dx, dy] = shifts[f]!;
    let sum = 0;
    let n = 0;
    for (let y = 0; y < side; y++) {
      for (let x = 0; x < side; x++) {
        const sx = x + dx;
        const sy = y + dy;
        if (Math.hypot(box.left + x - mx, box.top + y - my) > radius || sx < 0 || sy < 0 || sx >= side || sy >= side) continue;
        sum += Math.abs(frames[f]![sy * side + sx]! - still[y * side + x]!);
        n++;
      }
    }
    total += sum / Math.max(1, n);
  }
  return { mouthVersusVoice, loudOpening: total / loudest.length };
}
