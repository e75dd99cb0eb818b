import { DEFAULT_VIDEO_ASPECT, type FoundFace, type VideoAspect } from '@petsing/workflows';
import { eyeDistance, eyeMidpoint, faceLength, type PetFace } from './pet-face.ts';

export const DEFAULT_OUTPUT_WIDTH = 720;

/** Width over height of each output shape. */
const ASPECT_RATIO: Record<VideoAspect, number> = { square: 1, '9:16': 9 / 16, '4:5': 4 / 5 };

/**
 * How much of the frame's width the face takes, per shape, in "face widths" (the wider of two eye
 * distances and 1.6 face lengths, which covers ears and cheeks): a tall frame is narrow, so the pet
 * is framed closer to fill it, and the height left over shows the chest.
 */
const FRAME_WIDTH_IN_FACE_WIDTHS: Record<VideoAspect, number> = { square: 2.2, '4:5': 1.95, '9:16': 1.65 };
/** Where the face's centre (between eyes and chin) sits, from the top, as a fraction of the frame height. */
const FACE_CENTRE_FROM_TOP: Record<VideoAspect, number> = { square: 0.5, '4:5': 0.46, '9:16': 0.42 };
/** The head box is shown with this much room around it (a share of its size). */
const HEAD_MARGIN = 1.1;
/** A small photo is enlarged at most this much: beyond it, fur turns to mush. */
export const MAX_UPSCALE = 2;
/**
 * A head shown at less than this share of the size its shape frames it at (a small pet in the photo,
 * which the 2× rule keeps from being brought up to fill the frame) is a "small-face" framing.
 */
const SMALL_FACE_FILL = 0.6;

/** Whether the head fills the frame as its shape intends, or is too small in the photo to (said on the photo check and by the render). */
export type FaceFit = NonNullable<FoundFace['framing']>;

export interface Framing {
  /**
   * The part of the photo shown, in the photo's pixels (integers). For 4:5 and 9:16 it reaches past
   * the photo's edges when the photo is too narrow or short for the shape around the whole head; the
   * renderer fills that margin with a blurred copy of the photo. A square stays inside the photo.
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

/**
 * Picks the part of the photo to show and the output size: the head centred and whole (eyes and chin
 * always, with a margin) in the requested shape, brought up to fill the frame. The shown part is never
 * enlarged more than MAX_UPSCALE: a head too small for that is shown with more of the photo around it
 * (`fit: 'small-face'`), and a small photo gives a smaller video of the same shape (rounded to even
 * pixels, at most the photo's own resolution).
 */
export function frameFace(imageWidth: number, imageHeight: number, face: PetFace, aspect: VideoAspect, outputWidth: number): Framing {
  const ratio = ASPECT_RATIO[aspect];
  const faceWidth = Math.max(2 * eyeDistance(face), 1.6 * faceLength(face));
  const wanted = faceWidth * FRAME_WIDTH_IN_FACE_WIDTHS[aspect];
  const photoWidth = Math.min(imageWidth, imageHeight * ratio);
  // Enough of the photo to make the requested width without enlarging it more than MAX_UPSCALE.
  const fillable = Math.max(wanted, Math.min(outputWidth / MAX_UPSCALE, photoWidth));
  // The whole head with a margin, even where that means showing more than the photo holds. Ears and
  // cheeks reach past the landmarks: the head is at least 1.2 face widths across. A square always fits
  // inside the photo, so only the tall shapes may reach past its edges.
  const head = face.head;
  const headFits = aspect === 'square' ? 0 : HEAD_MARGIN * Math.max(head.width, 1.2 * faceWidth, head.height * ratio);
  const width = Math.max(2, Math.min(fillable, photoWidth), headFits);
  const height = width / ratio;
  const [eyeX, eyeY] = eyeMidpoint(face);
  const centreX = (eyeX + face.chin[0]) / 2;
  const centreY = (eyeY + face.chin[1]) / 2;
  const crop = {
    left: place(centreX, width, imageWidth),
    top: place(centreY + height * (0.5 - FACE_CENTRE_FROM_TOP[aspect]), height, imageHeight),
    width: Math.round(width),
    height: Math.round(height),
  };
  // Never more pixels than the photo has in this shape, and never the shown part enlarged beyond 2×.
  const outWidth = even(Math.min(outputWidth, imageWidth, imageHeight * ratio, crop.width * MAX_UPSCALE));
  const fit: FaceFit = wanted < SMALL_FACE_FILL * width ? 'small-face' : 'whole-head';
  return { crop, width: outWidth, height: even(outWidth / ratio), fit };
}

/** How a default video (square, 720 px) would frame a photo's face: what the photo check says. */
export const defaultFit = (imageWidth: number, imageHeight: number, face: PetFace): FaceFit =>
  frameFace(imageWidth, imageHeight, face, DEFAULT_VIDEO_ASPECT, DEFAULT_OUTPUT_WIDTH).fit;
