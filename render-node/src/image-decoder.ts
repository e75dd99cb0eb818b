import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import sharp, { type Metadata } from 'sharp';
import { MAX_INPUT_PIXELS, MAX_INPUT_SIDE } from '@petsing/workflows/media';
import { runProcess, withScratchDirectory } from '@petsing/platform/tools';
import { RENDER_SCRATCH } from './scratch.ts';
import { RenderError } from './errors.ts';

/** Packed 8-bit RGB, row-major. */
export interface RgbImage {
  width: number;
  height: number;
  data: Buffer;
}

export interface DecodedImage extends RgbImage {
  format: string;
  /** Pixel size of the file before orientation and downscaling. */
  sourceWidth: number;
  sourceHeight: number;
  /** Pixel size of the photo as seen, after EXIF orientation (the coordinates of face landmarks and hints). */
  orientedWidth: number;
  orientedHeight: number;
  /** How it was decoded: libvips directly, or libheif's heif-convert for HEVC-coded HEIC. */
  decoder: 'sharp' | 'heif-convert';
}

/** Working resolution: enough to crop a small pet out of a large photo and still fill a 720 px frame. */
const WORKING_MAX_SIDE = 3072;
/** Transparent cut-outs are flattened onto this neutral grey so the detector sees a plain background. */
const FLATTEN_BACKGROUND = { r: 236, g: 236, b: 232 };

const UNDECODABLE_HINT = 'Upload the photo again as JPEG, PNG, WebP or HEIC; the file looks damaged or incomplete.';

function undecodable(detail: string, cause?: unknown): RenderError {
  return new RenderError('image_undecodable', 'the image cannot be decoded: the file is damaged, incomplete or not a photo', UNDECODABLE_HINT, { cause, detail });
}

async function toWorkingRgb(input: string | Buffer, autoOrient: boolean, maxSide: number): Promise<RgbImage> {
  // 'truncated' rather than 'warning': phone JPEGs often carry harmless warnings, a cut-off upload must fail.
  let pipeline = sharp(input, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'truncated' });
  if (autoOrient) pipeline = pipeline.rotate();
  const { data, info } = await pipeline
    .resize({ width: maxSide, height: maxSide, fit: 'inside', withoutEnlargement: true })
    .flatten({ background: FLATTEN_BACKGROUND })
    .toColourspace('srgb')
    .removeAlpha()
    .raw()
    .toBuffer({ resolveWithObject: true });
  if (info.channels !== 3) throw undecodable(`unexpected ${info.channels} channels after conversion`);
  return { width: info.width, height: info.height, data };
}

/**
 * sharp's prebuilt libvips reads HEIF containers but ships libheif without an HEVC decoder
 * (only AV1/AVIF), so HEIC photos from phones go through heif-convert (Debian libheif-examples,
 * which uses libde265). libheif applies the HEIF rotation boxes itself.
 */
async function decodeHeicWithHeifConvert(path: string, maxSide: number): Promise<RgbImage> {
  return withScratchDirectory(RENDER_SCRATCH.heic, async (dir) => {
    const target = join(dir, 'decoded.png');
    const result = await runProcess('heif-convert', [path, target]).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') {
        throw new RenderError('image_undecodable', 'HEIC photos need heif-convert (apt-get install libheif-examples) on the render node', 'Upload the photo as JPEG or PNG.', {
          cause: error,
          permanent: false,
        });
      }
      throw error;
    });
    const written = (await readdir(dir)).filter((name) => name.endsWith('.png')).sort();
    if (result.code !== 0 || written.length === 0) throw undecodable(`heif-convert failed: ${result.stderr.trim().split('\n').pop() ?? ''}`);
    return await toWorkingRgb(join(dir, written[0]!), false, maxSide);
  });
}

/**
 * Decodes a photo (EXIF orientation applied, transparency flattened) into a working copy of at most
 * `maxSide` pixels a side: the render's WORKING_MAX_SIDE by default; a photo check asks for less, which
 * JPEG decodes faster (libvips shrinks while decoding).
 */
export async function decodeImage(path: string, maxSide = WORKING_MAX_SIDE): Promise<DecodedImage> {
  let metadata: Metadata;
  try {
    metadata = await sharp(path, { limitInputPixels: false }).metadata();
  } catch (error) {
    throw undecodable((error as Error).message, error);
  }
  const { width, height, format } = metadata;
  if (!width || !height) throw undecodable('no dimensions in the header');
  // Refuse before decoding: a tiny file can declare a gigapixel canvas (a decompression bomb).
  if (width * height > MAX_INPUT_PIXELS || width > MAX_INPUT_SIDE || height > MAX_INPUT_SIDE) {
    throw new RenderError(
      'image_too_large',
      `the image is ${width}×${height} pixels; at most ${MAX_INPUT_PIXELS / 1e6} megapixels and ${MAX_INPUT_SIDE} px a side are accepted`,
      'Resize the photo to at most about 7000×7000 pixels and upload it again.',
    );
  }
  const isHevc = format === 'heif' && metadata.compression === 'hevc';
  try {
    const rgb = isHevc ? await decodeHeicWithHeifConvert(path, maxSide) : await toWorkingRgb(path, true, maxSide);
    // Downscaling keeps the aspect ratio, so the decoded image tells whether orientation swapped the sides.
    const swapped = (rgb.width > rgb.height) !== (width > height) && width !== height;
    return {
      ...rgb,
      format: isHevc ? 'heic' : (format ?? 'unknown'),
      sourceWidth: width,
      sourceHeight: height,
      orientedWidth: swapped ? height : width,
      orientedHeight: swapped ? width : height,
      decoder: isHevc ? 'heif-convert' : 'sharp',
    };
  } catch (error) {
    if (error instanceof RenderError) throw error;
    throw undecodable((error as Error).message, error);
  }
}
