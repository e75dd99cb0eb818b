import sharp from 'sharp';
import { RenderError } from './errors.ts';
import type { RgbImage } from './image-decoder.ts';
import { MOUTH_GEOMETRY } from './model-generator.ts';
import type { MouthRegion } from './mouth-detector.ts';

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
 * horizontally centred), shrinking it rather than shifting it when it would leave the frame.
 */
export function cropBoxFor(region: MouthRegion, frameWidth: number, frameHeight: number): CropBox {
  const lipFraction = MOUTH_GEOMETRY.upperLipY;
  const limits = [
    region.faceWidth * CROP_TO_FACE,
    2 * region.centreX,
    2 * (frameWidth - region.centreX),
    region.upperLipY / lipFraction,
    (frameHeight - region.upperLipY) / (1 - lipFraction),
  ];
  const side = Math.floor(Math.min(...limits) / 2) * 2;
  if (!(side >= MIN_CROP_SIDE)) {
    throw new RenderError(
      'face_not_found',
      `the pet's face region is ${Math.max(0, side)} px, too small or too close to the edge to animate`,
      'Use a photo where the pet faces the camera, fills a good part of the picture and its muzzle is not cut off.',
    );
  }
  const left = Math.min(frameWidth - side, Math.max(0, Math.round(region.centreX - side / 2)));
  const top = Math.min(frameHeight - side, Math.max(0, Math.round(region.upperLipY - side * lipFraction)));
  return { left, top, side };
}

/**
 * The face input of the contract for one frame: 6×S×S, BGR planar, 0-1; channels 0-2 are the
 * crop with its lower half zeroed, 3-5 the full crop. Computed once per job (the photo is still).
 */
export async function buildFaceInput(frame: RgbImage, box: CropBox, faceSize: number): Promise<Float32Array> {
  const { data } = await sharp(frame.data, { raw: { width: frame.width, height: frame.height, channels: 3 } })
    .extract({ left: box.left, top: box.top, width: box.side, height: box.side })
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
