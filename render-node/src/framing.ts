import { DEFAULT_VIDEO_ASPECT, type FoundFace, type VideoAspect } from '@petsing/workflows';
import { eyeMidpoint, faceLength, type PetFace, type Point } from './pet-face.ts';

export const DEFAULT_OUTPUT_WIDTH = 720;

/** Width over height of each output shape. */
const ASPECT_RATIO: Record<VideoAspect, number> = { square: 1, '9:16': 9 / 16, '4:5': 4 / 5 };

/**
 * The least share of the frame's height the head (the pet-face model's head box) takes, per shape: on a phone a
 * 9:16 video shows the head at 40% of the screen's height at least, a square at half. Below it (the pet too small
 * in the photo to be brought up to it without enlarging the photo more than MAX_UPSCALE) the framing is
 * "small-face".
 */
export const MIN_HEAD_SHARE: Record<VideoAspect, number> = { square: 0.5, '4:5': 0.45, '9:16': 0.4 };
/** The share aimed at where the photo allows it: the head fills a phone's screen, and rounding never drops it below the least. */
const HEAD_SHARE_AIM: Record<VideoAspect, number> = { square: 0.6, '4:5': 0.55, '9:16': 0.5 };
/** The least share of the frame's height between the eyes and the chin. */
export const MIN_FACE_SHARE = 0.11;
/** A head box taller than this many eyes-to-chin lengths holds more than the head (a neck, a body): the head is taken as this tall. */
const MAX_HEAD_IN_FACE_LENGTHS = 3.5;

/** The head's height as framed: the model's head box, at most MAX_HEAD_IN_FACE_LENGTHS face lengths. */
export const headSize = (face: PetFace): number => Math.min(face.head.height, MAX_HEAD_IN_FACE_LENGTHS * faceLength(face));
/** Where the face's centre (between eyes and chin) sits, from the top, as a fraction of the frame height. */
const FACE_CENTRE_FROM_TOP: Record<VideoAspect, number> = { square: 0.5, '4:5': 0.47, '9:16': 0.45 };
/**
 * Room kept around the eyes, nose, mouth and chin (and the jaw's underside below the chin, which an opening
 * mouth moves), in face lengths: ears may be cut by the frame, these never.
 */
const FEATURE_MARGIN = 0.22;
/** The jaw's underside, below the chin by this share of the eyes-to-chin line. */
const UNDER_CHIN = 0.25;
/** A small photo is enlarged at most this much: beyond it, fur turns to mush. */
export const MAX_UPSCALE = 2;

/** Whether the head fills the frame as its shape intends, or is too small in the photo to (said on the photo check and by the render). */
export type FaceFit = NonNullable<FoundFace['framing']>;

export interface Framing {
  /**
   * The part of the photo shown, in the photo's pixels (integers). For 4:5 and 9:16 it reaches past
   * the photo's edges when the photo is too narrow or short for the shape around the face; the
   * renderer fills that margin with a blurred copy of the photo, feathered into it (render-pipeline.ts).
   * A square stays inside the photo.
   */
  crop: { left: number; top: number; width: number; height: number };
  /** Output frame size (even). */
  width: number;
  height: number;
  fit: FaceFit;
}

const even = (value: number) => Math.max(2, 2 * Math.round(value / 2));

/** Where a span of `size` around `centre` starts, kept inside [0, limit] when it fits. */
function place(centre: number, size: number, limit: number): number {
  if (size >= limit) return Math.round((limit - size) / 2);
  return Math.round(Math.min(limit - size, Math.max(0, centre - size / 2)));
}

/** The box the frame must hold whole: eyes, nose, mouth, chin and the jaw below it, with FEATURE_MARGIN around. */
function featureBox(face: PetFace): { left: number; top: number; right: number; bottom: number } {
  const [eyeX, eyeY] = eyeMidpoint(face);
  const underChin: Point = [face.chin[0] + UNDER_CHIN * (face.chin[0] - eyeX), face.chin[1] + UNDER_CHIN * (face.chin[1] - eyeY)];
  const points = [...face.eyes, face.nose, face.mouth, face.chin, underChin];
  const margin = FEATURE_MARGIN * faceLength(face);
  return {
    left: Math.min(...points.map(([x]) => x)) - margin,
    top: Math.min(...points.map(([, y]) => y)) - margin,
    right: Math.max(...points.map(([x]) => x)) + margin,
    bottom: Math.max(...points.map(([, y]) => y)) + margin,
  };
}

/**
 * Picks the part of the photo to show and the output size: the head brought up to MIN_HEAD_SHARE of the
 * frame's height (ears may be cut; eyes, muzzle and chin are always inside with a margin). The shown part is
 * never enlarged more than MAX_UPSCALE: a head too small for that is shown with more of the photo around it
 * (`fit: 'small-face'`), and a small photo gives a smaller video of the same shape (rounded to even pixels, at
 * most the photo's own resolution).
 */
export function frameFace(imageWidth: number, imageHeight: number, face: PetFace, aspect: VideoAspect, outputWidth: number): Framing {
  const ratio = ASPECT_RATIO[aspect];
  const length = faceLength(face);
  const features = featureBox(face);
  const head = headSize(face);
  // The frame's height that shows the head at the aimed share.
  const aimed = head / HEAD_SHARE_AIM[aspect];
  // The features must fit: across, and down from the face's centre placed where the shape puts it.
  const centreY = (eyeMidpoint(face)[1] + face.chin[1]) / 2;
  const fromTop = FACE_CENTRE_FROM_TOP[aspect];
  const tallEnough = Math.max((centreY - features.top) / fromTop, (features.bottom - centreY) / (1 - fromTop));
  const wideEnough = (features.right - features.left) / ratio;
  const photoWidth = Math.min(imageWidth, imageHeight * ratio);
  // The video is at most as wide as the photo gives in this shape; never so little of the photo that it is enlarged more than MAX_UPSCALE.
  const videoWidth = Math.min(outputWidth, photoWidth);
  const leastWidth = videoWidth / MAX_UPSCALE;
  let width = Math.max(2, aimed * ratio, tallEnough * ratio, wideEnough * ratio, leastWidth);
  // A square stays inside the photo (the tall shapes may reach past its edges, filled).
  if (aspect === 'square') width = Math.min(width, photoWidth);
  // Whole pixels first, so a crop that fits the photo is placed inside it to the pixel.
  const cropWidth = Math.max(2, Math.round(width));
  const cropHeight = Math.max(2, Math.round(cropWidth / ratio));
  const centreX = (features.left + features.right) / 2;
  const crop = {
    left: place(centreX, cropWidth, imageWidth),
    top: place(centreY + cropHeight * (0.5 - fromTop), cropHeight, imageHeight),
    width: cropWidth,
    height: cropHeight,
  };
  // Never more pixels than the photo has in this shape, and never the shown part enlarged beyond 2×.
  const outWidth = even(Math.min(videoWidth, crop.width * MAX_UPSCALE));
  const fit: FaceFit = head / crop.height < MIN_HEAD_SHARE[aspect] || length / crop.height < MIN_FACE_SHARE ? 'small-face' : 'whole-head';
  return { crop, width: outWidth, height: even(outWidth / ratio), fit };
}

/** How a default video (square, 720 px) would frame a photo's face: what the photo check says. */
export const defaultFit = (imageWidth: number, imageHeight: number, face: PetFace): FaceFit =>
  frameFace(imageWidth, imageHeight, face, DEFAULT_VIDEO_ASPECT, DEFAULT_OUTPUT_WIDTH).fit;
