import { MAX_INPUT_PIXELS, MAX_INPUT_SIDE } from '@petsing/workflows/media';
import sharp from 'sharp';
import { AppError } from '../errors/app-error.ts';

const undecodable = (cause: unknown) =>
  new AppError('unsupported_image_format', 'The image could not be decoded; it may be truncated or corrupt.', {
    hint: 'Send a complete PNG, JPEG or WebP photo.',
    cause,
  });

/**
 * Reads an uploaded photo's header: an image of a size the render node accepts. Enough before a photo check,
 * whose render node decodes every pixel itself (and refuses what it cannot decode).
 */
export async function assertImageHeader(path: string): Promise<void> {
  const { width, height } = await sharp(path).metadata().catch((error: unknown) => {
    throw undecodable(error);
  });
  // The render node's own limits: a photo it would refuse must not be paid for.
  if (!width || !height || width * height > MAX_INPUT_PIXELS || width > MAX_INPUT_SIDE || height > MAX_INPUT_SIDE) {
    throw new AppError('unsupported_image_format', `The image is ${width}×${height} pixels; at most ${MAX_INPUT_PIXELS / 1e6} megapixels and ${MAX_INPUT_SIDE} px a side are accepted.`, {
      hint: 'Send a smaller photo.',
    });
  }
}

/**
 * Decodes an uploaded photo once before anything is charged: its leading bytes were sniffed already, but a
 * truncated or corrupt file with a valid header would otherwise be paid for and fail at render time.
 */
export async function assertDecodableImage(path: string): Promise<void> {
  await assertImageHeader(path);
  // Decoding every pixel is what proves the file is complete.
  await sharp(path, { failOn: 'error', limitInputPixels: MAX_INPUT_PIXELS }).stats().catch((error: unknown) => {
    throw undecodable(error);
  });
}
