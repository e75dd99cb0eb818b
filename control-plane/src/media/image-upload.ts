import sharp from 'sharp';
import { AppError } from '../errors/app-error.ts';

/** Web uploads larger than this in either dimension are refused (the render downsizes to 512 px anyway). */
const MAX_DIMENSION = 12_000;

/**
 * Decodes an uploaded photo once before anything is charged: its leading bytes were sniffed already, but a
 * truncated or corrupt file with a valid header would otherwise be paid for and fail at render time.
 */
export async function assertDecodableImage(path: string): Promise<void> {
  try {
    const { width, height } = await sharp(path).metadata();
    if (!width || !height || width > MAX_DIMENSION || height > MAX_DIMENSION) throw new Error(`unusable dimensions ${width}x${height}`);
    // Decoding every pixel is what proves the file is complete.
    await sharp(path, { failOn: 'error', limitInputPixels: MAX_DIMENSION * MAX_DIMENSION }).stats();
  } catch (error) {
    throw new AppError('unsupported_image_format', 'The image could not be decoded; it may be truncated or corrupt.', {
      hint: 'Send a complete PNG, JPEG or WebP photo.',
      cause: error,
    });
  }
}
