import sharp from 'sharp';
import { RenderError } from './errors.ts';
import type { RgbImage } from './image-decoder.ts';
import { MOUTH_GEOMETRY } from './model-generator.ts';
import type { MouthRegion } from './mouth-region.ts';

/** The square of the output frame the model sees and redraws. */
export interface CropBox {
  left: number;
  top: number;
  side: number;
}

/** Crop side relative to the head width: the head's lower half, muzzle and chin, like a Wav2Lip face box. */
const CROP_TO_FACE = 0.8;
const MIN_CROP_SIDE = 48;

/**
 * Places the crop so the upper lip sits where the contract's models expect it (70% down,
 * horizontally centred). The crop may run past the frame edge (a chin cut off by the photo); the
 * model then sees replicated edge pixels and only the part inside the frame is composited back.
 */
export function cropBoxFor(region: MouthRegion, frameWidth: number, frameHeight: number): CropBox {
  const lipFraction = MOUTH_GEOMETRY.upperLipY;
  // At most half the crop may hang outside the frame on any side.
  const limits = [
    region.faceWidth * CROP_TO_FACE,
    4 * region.centreX,
    4 * (frameWidth - region.centreX),
    (2 * region.upperLipY) / lipFraction,
    ((frameHeight - region.upperLipY) * 2) / (1 - lipFraction),
    Math.min(frameWidth, frameHeight),
  ];
  const side = Math.floor(Math.min(...limits) / 2) * 2;
  if (!(side >= MIN_CROP_SIDE) || region.upperLipY >= frameHeight || region.centreX <= 0 || region.centreX >= frameWidth) {
    throw new RenderError(
      'face_not_found',
      `the pet's face region is ${Math.max(0, side)} px, too small or too close to the edge to animate`,
      'Use a photo where the pet faces the camera, fills a good part of the picture and its muzzle is not cut off.',
    );
  }
  return { left: Math.round(region.centreX - side / 2), top: Math.round(region.upperLipY - side * lipFraction), side };
}

/**
 * The face input of the contract for one frame: 6×S×S, BGR planar, 0-1; channels 0-2 are the
 * crop with its lower half zeroed, 3-5 the full crop. Computed once per job (the photo is still).
 */
export async function buildFaceInput(frame: RgbImage, box: CropBox, faceSize: number): Promise<Float32Array> {
  const pad = {
    left: Math.max(0, -box.left),
    top: Math.max(0, -box.top),
    right: Math.max(0, box.left + box.side - frame.width),
    bottom: Math.max(0, box.top + box.side - frame.height),
  };
  const padded = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .extend({ ...pad, extendWith: 'copy' })
    .raw()
    .toBuffer();
  const { data } = await sharp(padded, { raw: { width: frame.width + pad.left + pad.right, height: frame.height + pad.top + pad.bottom, channels: 3 } })
    .extract({ left: box.left + pad.left, top: box.top + pad.top, width: box.side, height: box.side })
    .resize(faceSize, faceSize, { kernel: 'cubic' })
    .raw()
    .toBuffer({ resolveWithObject: true });
  const plane = faceSize * faceSize;
  const input = new Float32Array(6 * plane);
  for (let i = 0; i < plane; i++) {
    const row = Math.floor(i / faceSize);
    const keep = row < faceSize / 2 ? 1 : 0;
    for (let c = 0; c < 3; c++) {
      const value = data[i * 3 + (2 - c)]! / 255; // RGB pixel → BGR plane c
      input[c * plane + i] = value * keep;
      input[(3 + c) * plane + i] = value;
    }
  }
  return input;
}
